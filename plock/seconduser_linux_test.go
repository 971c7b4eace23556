package plock

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rivus/collab/platform/sqlite"
)

// TestOtherUserCannotOpenTheLockDatabase: a user who could open the lock
// database could hold a read transaction on it and keep every holder out.
// A process running as nobody, in a directory it may enter, cannot open
// it, and still reads who holds the lock from the .holder stamp. It needs
// root to run that process; CI runs as root.
func TestOtherUserCannotOpenTheLockDatabase(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI must run the tests as root, to run a process as another user")
		}
		t.Skip("running a process as another user needs root")
	}
	dir, err := os.MkdirTemp("", "collab-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "app.lock")
	l, err := Acquire(context.Background(), sqlite.OS(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	asNobody := func(script string) (string, error) {
		cmd := exec.Command("sh", "-c", script, "sh", path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := asNobody(`exec 3<"$1" && echo opened`); err == nil || strings.Contains(out, "opened") {
		t.Errorf("nobody opened the lock database: %q, %v", out, err)
	}
	if out, err := asNobody(`cat "$1.holder"`); err != nil || !strings.Contains(out, `"pid"`) {
		t.Errorf("nobody could not read the holder stamp: %q, %v", out, err)
	}
}
