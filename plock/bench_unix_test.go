//go:build unix

package plock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rivus/collab/internal/childproc"
	"github.com/rivus/collab/internal/sqlitelock"
	"github.com/rivus/collab/platform"
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
		lk := unix.Flock_t{Type: unix.F_RDLCK, Start: sqlitelock.PendingByte, Len: sqlitelock.LockBytes}
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

// BenchmarkRefusal measures an attempt that does not wait, refused on a
// SQLite lock another process holds, against the floor of a refused
// gofrs/flock TryLock: open the file, one lock attempt that fails, close
// it; here the attempt is fcntl's F_SETLK on the bytes SQLite locks, which
// the holder has. sqlite-busy-wait is the refusal the kernel's answer
// spares: through a SQLite value it does not cover, whose first attempt
// waits SQLite's busy timeout at each of its tries.
func BenchmarkRefusal(b *testing.B) {
	path := filepath.Join(b.TempDir(), "daemon.lock")
	ctx := context.Background()
	holder := childproc.Start(b, helperEnv+"="+helperHold, backendEnv+"="+backendSQLite, pathEnv+"="+path)
	holder.Expect(b, "held")

	refuse := func(p *platform.Platform) func() {
		return func() {
			if l, err := Acquire(ctx, p, path, Options{}); !errors.Is(err, ErrHeld) {
				b.Fatalf("Acquire while another process holds = %v, %v; want a *HeldError", l, err)
			}
		}
	}
	floor := func() { refusedTryLock(b, path) }
	other := *sqlite.OS()
	other.SQLite = newCountingSQLite()
	b.Run("sqlite", func(b *testing.B) { measure(b, refuse(sqlite.OS()), floor) })
	b.Run("sqlite-floor", func(b *testing.B) { loop(b, floor) })
	b.Run("sqlite-busy-wait", func(b *testing.B) { loop(b, refuse(&other)) })
}

// refusedTryLock is what gofrs/flock's TryLock does on a file another
// process has locked: open it, make one lock attempt that does not wait
// (fcntl's F_SETLK here, on SQLite's lock bytes, where flock(2) would not
// meet SQLite's locks), find it held, and close the file. This process
// holds no lock on the file, so closing it drops none.
func refusedTryLock(b *testing.B, path string) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Start: sqlitelock.PendingByte, Len: sqlitelock.LockBytes}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EACCES) {
		b.Fatalf("a lock attempt on the held lock's bytes = %v; want EAGAIN or EACCES", err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
