package platform

import (
	"database/sql"
	"errors"
	"time"
)

// SQLite opens SQLite databases. This package names no driver, so that a
// program that needs no SQLite links none: platform/sqlite holds the
// opener of modernc.org/sqlite.
type SQLite interface {
	// Open opens the database at path with opts. It does not touch the
	// file: SQLite opens it on the first statement. Options it cannot
	// apply (a JournalMode that is not a word, an unknown TxLock) are an
	// *SQLiteError, and open nothing. Errors of statements carry their
	// SQLite result code (see SQLiteCode).
	Open(path string, opts SQLiteOptions) (*sql.DB, error)
}

// SQLiteOptions configure one database handle.
type SQLiteOptions struct {
	// ReadOnly opens an existing database only: a missing file stays
	// missing, and the first statement fails instead.
	ReadOnly bool
	// BusyTimeout is how long a statement waits for another connection's
	// lock; 0 fails at once with SQLITE_BUSY.
	BusyTimeout time.Duration
	// ExclusiveLocking sets locking_mode=EXCLUSIVE: once a connection has
	// written, it keeps the file locked until it closes.
	ExclusiveLocking bool
	// JournalMode is the journal_mode pragma ("" keeps SQLite's default,
	// a rollback journal).
	JournalMode string
	// TxLock is how BEGIN starts a transaction: "" or "deferred",
	// "immediate", "exclusive".
	TxLock string
}

// SQLiteError reports options that an SQLite cannot apply to a database.
type SQLiteError struct {
	Path   string
	Reason string
}

func (e *SQLiteError) Error() string {
	return "platform: sqlite " + e.Path + ": " + e.Reason
}

// SQLite primary result codes that callers act on.
const (
	SQLiteBusy     = 5  // SQLITE_BUSY: another connection holds a conflicting lock
	SQLiteLocked   = 6  // SQLITE_LOCKED: a conflict within one connection's cache
	SQLiteCantOpen = 14 // SQLITE_CANTOPEN: the file cannot be opened (missing, for read-only)
)

// SQLiteCode returns the primary SQLite result code carried by err (an
// error with a Code() int method, as drivers report them), or 0 when err
// carries none.
func SQLiteCode(err error) int {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		return coded.Code() & 0xff
	}
	return 0
}
