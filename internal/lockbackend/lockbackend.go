// Package lockbackend is what plock shares with its SQLite mode, which
// lives apart (internal/sqlitelock) so that a program that takes only
// lock files links neither it nor database/sql: the ways of holding a
// lock across processes, what they answer, and the .holder stamp beside
// a SQLite lock.
//
// internal/sqlitelock registers itself in SQLite as it initialises; it is
// linked by platform/sqlite, and by a program that uses its KernelLocks.
package lockbackend

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/rivus/collab/platform"
)

// Backend is one way of holding the lock across processes.
type Backend interface {
	// Attempt makes one attempt at the lock; it returns a *BusyError when
	// another process holds it. busy bounds the wait for a holder that
	// holds it only briefly (SQLite's busy timeout).
	Attempt(ctx context.Context, self *platform.Identity, busy time.Duration) (Held, error)
	// IsHeld tells, without taking the lock or writing anything, whether
	// another process holds it, and by whom when known.
	IsHeld(ctx context.Context) (Probed, error)
	// NeedsIdentity reports whether the lock cannot be taken without the
	// process's own identity.
	NeedsIdentity() bool
}

// Probed is what IsHeld learnt of a lock.
type Probed struct {
	Held   bool
	Holder *platform.Identity // the holder's identity, when the backend keeps it
	// PID is the process the kernel names as holding the lock, when it
	// can tell (SQLite's POSIX locks, on this process table), else 0.
	PID int
}

// Held is a taken lock.
type Held interface {
	Release() error
}

// BusyError says another process holds the lock.
type BusyError struct {
	Holder *platform.Identity // nil when unknown
	// PID is the process the kernel names as holding the lock (a SQLite
	// write lock, on this process table), or 0.
	PID int
}

func (e *BusyError) Error() string { return "plock: lock is held by another process" }

// WriteLockedError is a BusyError the kernel answered before SQLite was
// opened: another process has a write lock on SQLite's lock bytes, so it
// holds the lock or is taking it. The first attempt's busy wait is for a
// check in progress (a read lock), not for this: no try waits it out.
type WriteLockedError struct{ Busy *BusyError }

func (e *WriteLockedError) Error() string {
	return e.Busy.Error() + " (the kernel names its write lock)"
}

// Unwrap makes errors.As find the BusyError and its holder.
func (e *WriteLockedError) Unwrap() error { return e.Busy }

// SQLite returns the SQLite mode's backend for the lock at path on p (a
// platform with a SQLite), or is nil in a program that does not link
// internal/sqlitelock. busyPath reports whether a task of this process
// holds or takes the lock at a path (plock's turns). Only
// internal/sqlitelock's init sets it; it is read only after init.
var SQLite func(p *platform.Platform, path string, busyPath func(string) bool) Backend

// HolderSuffix names the diagnostics file beside a SQLite lock.
const HolderSuffix = ".holder"

// ReadHolder reads an identity stamp. Anything that is not a valid stamp
// (missing, empty, garbage, a link, a FIFO, too large) yields nil: the
// stamp is for diagnostics, and a bad one must not stop anyone.
func ReadHolder(fsys platform.FS, name string) *platform.Identity {
	data, err := fsys.ReadFile(name, platform.MaxIdentityJSON)
	if err != nil {
		return nil
	}
	id, err := platform.ParseIdentity(data)
	if err != nil {
		return nil
	}
	return &id
}

// RemoveIfExists removes name, treating a missing file as removed.
func RemoveIfExists(fsys platform.FS, name string) error {
	if err := fsys.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// StampMismatch reports whether the stamp names a process of this
// process table other than pid, which the kernel names as the holder.
func StampMismatch(p *platform.Platform, stamp *platform.Identity, pid int) bool {
	if stamp == nil || pid == 0 {
		return false
	}
	self, err := p.Process.Self()
	return err == nil && self.SameProcessTable(*stamp) && stamp.PID != pid
}
