//go:build linux || darwin

package platform

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// child is a running re-executed test binary.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	wait   func() error // waits once; later calls return the first result
}

// startChild starts the test binary as a child in mode. The child is
// killed and reaped at the end of the test if it still runs.
func startChild(t *testing.T, mode string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// A race-enabled child would otherwise sleep a second before exiting.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "GORACE="+gorace)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	c := &child{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), wait: sync.OnceValue(cmd.Wait)}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill() // fails harmlessly when already reaped
		_ = c.wait()
	})
	return c
}

// line reads the child's next output line.
func (c *child) line(t *testing.T) string {
	t.Helper()
	s, err := c.stdout.ReadString('\n')
	if err != nil {
		t.Fatalf("read from child %d: %v (child exited: %v)", c.cmd.Process.Pid, err, c.wait())
	}
	return strings.TrimSuffix(s, "\n")
}

// finish closes the child's stdin so that it exits, and reaps it.
func (c *child) finish(t *testing.T) {
	t.Helper()
	if err := c.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("child failed: %v", exit)
		}
		t.Fatal(err)
	}
}
