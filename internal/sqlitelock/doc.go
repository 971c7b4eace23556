// Package sqlitelock is plock's SQLite mode: the lock held as SQLite's
// exclusive lock on a database, through SQLite or, where the kernel's
// lock table answers for SQLite's locks, through the kernel alone
// (KernelLocks).
//
// It lives apart from plock so that a program that takes only lock files
// links neither it nor database/sql. It registers itself with plock
// (lockbackend.SQLite) as it initialises; platform/sqlite imports it, so a
// program that links SQLite, by any import, has the SQLite mode, and a
// program that uses KernelLocks links it by that use.
package sqlitelock

import (
	"database/sql"

	"github.com/rivus/collab/internal/lockbackend"
	"github.com/rivus/collab/internal/sqliteos"
	"github.com/rivus/collab/platform"
)

func init() {
	lockbackend.SQLite = func(p *platform.Platform, path string, busyPath func(string) bool) lockbackend.Backend {
		return &sqliteBackend{p: p, path: path, busyPath: busyPath}
	}
}

// osSQLite is platform/sqlite's SQLite (modernc.org/sqlite), or nil in a
// program that does not link it.
func osSQLite() platform.SQLite {
	if sqliteos.OS == nil {
		return nil
	}
	return sqliteos.OS().SQLite
}

// KernelLocks is the SQLite of a program that takes plock's SQLite-mode
// locks without linking SQLite (the collab command's lock): with the
// operating system's files, where the kernel's lock table answers for
// SQLite's locks (unix), plock takes the write locks on the database's lock
// bytes that SQLite's unix VFS takes for an exclusive lock, itself, and
// opens no database. Processes that hold the lock through SQLite and
// through KernelLocks exclude each other, as two SQLite processes do. A
// process that takes a lock through KernelLocks must not open that
// database through SQLite as well: closing any descriptor of a file drops
// every POSIX lock of the process on it. Anywhere else (another FS, no
// POSIX locks) plock would have to open the database, and Open refuses.
var KernelLocks platform.SQLite = kernelLocks{}

type kernelLocks struct{}

func (kernelLocks) Open(path string, _ platform.SQLiteOptions) (*sql.DB, error) {
	return nil, &platform.SQLiteError{Path: path, Reason: "this program links no SQLite: it takes SQLite's locks through the kernel only, with the operating system's files, where POSIX locks exist"}
}
