//go:build unix

package plock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
	"github.com/rivus/collab/platform/sqlite"
)

// TestSQLiteLockInSharedDirRefused: in a directory every user can create
// files in, such as /tmp (sticky) or one without the sticky bit, another
// user could plant the lock database's -journal, or a link where SQLite
// opens it by name. The SQLite lock is refused there, naming the
// directory and the lock-file mode, and creates nothing; the lock-file
// mode takes the lock in the same directory.
func TestSQLiteLockInSharedDirRefused(t *testing.T) {
	platformtest.NeedRoot(t)
	for _, sticky := range []bool{true, false} {
		dir := platformtest.SharedDir(t, sticky)
		path := filepath.Join(dir, "app.lock")
		platformtest.Plant(t, `: > "$1-journal" && chmod 666 "$1-journal"`, path)
		_, err := Acquire(context.Background(), sqlite.OS(), path, Options{})
		var se *platform.SharedDirError
		if !errors.As(err, &se) || se.Path != dir || !strings.Contains(err.Error(), "lock-file mode") {
			t.Fatalf("sticky %v: Acquire = %v, want a *platform.SharedDirError naming %s and the lock-file mode", sticky, err, dir)
		}
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("sticky %v: the refused lock left a file at its path (%v)", sticky, err)
		}
		fileMode := *sqlite.OS()
		fileMode.SQLite = nil
		l, err := Acquire(context.Background(), &fileMode, path, Options{})
		if err != nil {
			t.Fatalf("sticky %v: lock-file mode in the shared directory: %v", sticky, err)
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPlantedReclaimLockRefused: another user (nobody) who makes
// PATH.reclaim first in a shared directory, and holds its flock, kept a
// dead holder's lock file from ever being reclaimed, every attempt told
// the lock was held. The reclaim lock is refused as not this user's,
// naming it: the caller learns what blocks the lock.
func TestPlantedReclaimLockRefused(t *testing.T) {
	platformtest.NeedRoot(t)
	f := newFileFake(t)
	path := filepath.Join(platformtest.SharedDir(t, true), "app.lock")
	holder := f.Processes.Start()
	mustAcquire(t, otherProcess(f, holder), path)
	f.Processes.Kill(holder.PID)
	f.Processes.Reap(holder.PID)
	platformtest.Plant(t, `: > "$1.reclaim" && chmod 666 "$1.reclaim"`, path)
	_, err := Acquire(context.Background(), f.Platform, path, Options{})
	if !errors.Is(err, platform.ErrNotOwned) || !strings.Contains(err.Error(), path+".reclaim") {
		t.Fatalf("Acquire over a dead holder beside another user's reclaim lock = %v; want an error naming it, not its owner's", err)
	}
}
