// Package sqliteos carries platform/sqlite's OS to plock, which must not
// import it. A nil *platform.Platform means plock's SQLite mode, in every
// program: a path must never be locked in two modes by two programs. Yet
// a program that takes only lock files (passing platform.OS()) must not
// link modernc.org/sqlite for it. So platform/sqlite registers its OS here
// as it initialises: a program that links it, by any import (directly,
// through lease/sqlite, or a blank import), has it; in any other, OS is
// nil and plock says how to choose a mode.
package sqliteos

import (
	"database/sql"

	"github.com/rivus/collab/platform"
)

// OS returns the operating system's platform with modernc.org/sqlite
// (platform/sqlite's OS), or is nil in a program that does not link
// platform/sqlite. Only platform/sqlite's init sets it (and tests, which
// restore it); it is read only after init, so it needs no lock.
var OS func() *platform.Platform

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
