//go:build unix

package plock

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rivus/collab/internal/childproc"
	"github.com/rivus/collab/platform/sqlite"
	"golang.org/x/sys/unix"
)

// BenchmarkIsHeld measures IsHeld on a lock another process holds,
// against the floor of one lock query (F_GETLK) on an open descriptor;
// sqlite-shared-attempt is what IsHeld did before it asked the kernel: a
// shared lock attempt through SQLite.
func BenchmarkIsHeld(b *testing.B) {
	path := filepath.Join(b.TempDir(), "daemon.lock")
	ctx := context.Background()
	holder := childproc.Start(b, helperEnv+"="+helperHold, backendEnv+"="+backendSQLite, pathEnv+"="+path)
	holder.Expect(b, "held")
	probe, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer probe.Close()

	floor := func() {
		lk := unix.Flock_t{Type: unix.F_RDLCK, Start: sqlitePendingByte, Len: sqliteLockBytes}
		if err := unix.FcntlFlock(probe.Fd(), unix.F_GETLK, &lk); err != nil {
			b.Fatal(err)
		}
	}
	isHeld := func() {
		held, err := IsHeld(ctx, sqlite.OS(), path)
		if err != nil || !held {
			b.Fatalf("IsHeld = %v, %v; want true", held, err)
		}
	}
	b.Run("sqlite", func(b *testing.B) { measure(b, isHeld, floor) })
	b.Run("sqlite-floor", func(b *testing.B) { loop(b, floor) })
	b.Run("sqlite-shared-attempt", func(b *testing.B) { loop(b, func() { sharedAttemptOnce(b, path) }) })
}
