package plock

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivus/collab/platform/platformtest"
	"github.com/rivus/collab/platform/sqlite"
)

// TestOtherUserCannotOpenTheLockDatabase: a user who could open the lock
// database could hold a read transaction on it and keep every holder out.
// A process running as nobody, in a directory it may enter, cannot open
// it, and still reads who holds the lock from the .holder stamp. It needs
// root to run that process; CI runs as root.
func TestOtherUserCannotOpenTheLockDatabase(t *testing.T) {
	platformtest.NeedRoot(t)
	dir := platformtest.ModeDir(t, 0o755)
	path := filepath.Join(dir, "app.lock")
	l, err := Acquire(context.Background(), sqlite.OS(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	asNobody := func(script string) (string, error) { return platformtest.AsNobody(t, script, path) }
	if out, err := asNobody(`exec 3<"$1" && echo opened`); err == nil || strings.Contains(out, "opened") {
		t.Errorf("nobody opened the lock database: %q, %v", out, err)
	}
	if out, err := asNobody(`cat "$1.holder"`); err != nil || !strings.Contains(out, `"pid"`) {
		t.Errorf("nobody could not read the holder stamp: %q, %v", out, err)
	}
}
