//go:build linux || darwin

package platform

import (
	"errors"
	"os/exec"
	"testing"

	"github.com/rivus/collab/internal/childproc"
)

// startChild starts the test binary as a child in mode (see runHelper).
func startChild(t *testing.T, mode string) *childproc.Child {
	t.Helper()
	return childproc.Start(t, helperEnv+"="+mode)
}

// finish closes the child's stdin so that it exits, and reaps it.
func finish(t *testing.T, c *childproc.Child) {
	t.Helper()
	if err := c.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("child failed: %v", exit)
		}
		t.Fatal(err)
	}
}
