package plock

import (
	"context"
	"time"

	"github.com/rivus/collab/platform"
)

// backend is one way of holding the lock across processes.
type backend interface {
	// attempt makes one attempt at the lock; it returns a *busyError when
	// another process holds it. busy bounds the wait for a holder that
	// holds it only briefly (SQLite's busy timeout).
	attempt(ctx context.Context, self *platform.Identity, busy time.Duration) (held, error)
	// isHeld tells, without taking the lock or writing anything, whether
	// another process holds it, and by whom when known.
	isHeld(ctx context.Context) (probed, error)
	// needsIdentity reports whether the lock cannot be taken without the
	// process's own identity.
	needsIdentity() bool
}

// probed is what isHeld learnt of a lock.
type probed struct {
	held   bool
	holder *platform.Identity // the holder's identity, when the backend keeps it
	// pid is the process the kernel names as holding the lock, when it
	// can tell (SQLite's POSIX locks, on this process table), else 0.
	pid int
}

// held is a taken lock.
type held interface {
	release() error
}

// busyError says another process holds the lock.
type busyError struct {
	holder *platform.Identity // nil when unknown
	// pid is the process the kernel names as holding the lock (a SQLite
	// write lock, on this process table), or 0.
	pid int
}

func (e *busyError) Error() string { return "plock: lock is held by another process" }

// writeLockedError is a busyError the kernel answered before SQLite was
// opened: another process has a write lock on SQLite's lock bytes, so it
// holds the lock or is taking it. The first attempt's busy wait is for a
// check in progress (a read lock), not for this: no try waits it out.
type writeLockedError struct{ busy *busyError }

func (e *writeLockedError) Error() string {
	return e.busy.Error() + " (the kernel names its write lock)"
}

// Unwrap makes errors.As find the busyError and its holder.
func (e *writeLockedError) Unwrap() error { return e.busy }

// backendFor picks SQLite when the platform has it, else the lock file.
func backendFor(p *platform.Platform, path string) backend {
	if p.SQLite != nil {
		return &sqliteBackend{p, path}
	}
	return &fileBackend{p, path}
}
