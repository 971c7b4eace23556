//go:build unix

package sqlitelock

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/rivus/collab/internal/lockbackend"
	"github.com/rivus/collab/platform"
	"golang.org/x/sys/unix"
)

// takeLockBytes takes SQLite's exclusive lock on the database at path
// without SQLite (platforms of KernelLocks): one write lock on
// the pending, reserved and shared bytes, what SQLite's unix VFS holds
// under locking_mode=EXCLUSIVE and BEGIN EXCLUSIVE (see LockBytes).
// SQLite takes those bytes in steps, each of which conflicts with this
// lock, so a holder through SQLite and one through the kernel exclude
// each other as two SQLite holders do. Like SQLite's busy handler, it
// tries again for up to busy while the conflict is a read lock (a check
// in progress); a write lock (a holder, or a taker) is a
// *writeLockedError at once. The returned file holds the lock until it is
// closed. The database is written nothing: an empty file is a database
// SQLite reads as empty.
func takeLockBytes(ctx context.Context, clk platform.Clock, path string, busy time.Duration) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := checkDatabase(f, path); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	start := clk.Monotonic()
	pause := platform.Backoff{Clock: clk, First: time.Millisecond, Max: 10 * time.Millisecond}
	for {
		lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: PendingByte, Len: LockBytes}
		err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
		if err == nil {
			return f, nil
		}
		// Closing f drops this process's POSIX locks on the file: it has
		// none while it takes the lock (the turns see to that).
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EACCES) {
			return nil, errors.Join(&fs.PathError{Op: "fcntl F_SETLK", Path: path, Err: err}, f.Close())
		}
		if locked, pid, err := writeLockOwner(f); err == nil && locked {
			return nil, errors.Join(&lockbackend.WriteLockedError{Busy: &lockbackend.BusyError{PID: pid}}, f.Close())
		}
		if clk.Monotonic()-start >= busy {
			return nil, errors.Join(&lockbackend.BusyError{}, f.Close())
		}
		if err := pause.Wait(ctx); err != nil {
			return nil, errors.Join(err, f.Close())
		}
	}
}

// checkDatabase requires f, at path, to be a regular file that is empty
// or a SQLite database, as SQLite would before it locks it.
func checkDatabase(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &fs.PathError{Op: "open", Path: path, Err: ErrNotDatabase}
	}
	var header [len(sqliteHeader)]byte
	n, err := f.ReadAt(header[:], 0)
	switch {
	case n == 0 && (err == nil || errors.Is(err, io.EOF)):
		return nil
	case n < len(header) || string(header[:]) != sqliteHeader:
		return &fs.PathError{Op: "read", Path: path, Err: ErrNotDatabase}
	}
	return nil
}
