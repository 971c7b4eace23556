package plock

import (
	"github.com/rivus/collab/internal/lockbackend"
	"github.com/rivus/collab/platform"
)

// The ways of holding the lock across processes, and what they answer
// (see lockbackend): the lock file here, the SQLite mode in
// internal/sqlitelock, which only a program that links platform/sqlite,
// or uses sqlitelock.KernelLocks, links.
type (
	backend          = lockbackend.Backend
	held             = lockbackend.Held
	probed           = lockbackend.Probed
	busyError        = lockbackend.BusyError
	writeLockedError = lockbackend.WriteLockedError
)

// backendFor picks SQLite when the platform has it, else the lock file.
// checkPlatform has refused a platform with a SQLite in a program without
// the SQLite mode.
func backendFor(p *platform.Platform, path string) backend {
	if p.SQLite != nil {
		return lockbackend.SQLite(p, path, turns.busyPath)
	}
	return &fileBackend{p, path}
}
