package plock

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/rivus/collab/platform/platformtest"
)

// openInChild lists the descriptors a child process inherits, with what
// each names.
func openInChild(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("ls", "-l", "/proc/self/fd/").CombinedOutput()
	if err != nil {
		t.Fatalf("ls /proc/self/fd: %v\n%s", err, out)
	}
	return string(out)
}

// TestLockDescriptorsNotInherited: every descriptor a held lock keeps open
// is close-on-exec, so a child process never holds the lock on after its
// parent is gone.
func TestLockDescriptorsNotInherited(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := platformtest.New(t, m.opts...)
			l, err := Acquire(context.Background(), f.Platform, lockPath(f), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			if fds := openInChild(t); strings.Contains(fds, f.Dir) {
				t.Fatalf("a child inherits descriptors of the lock's directory %s:\n%s", f.Dir, fds)
			}
		})
	}
}
