package platform

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// SQLite opens SQLite databases.
type SQLite interface {
	// Open opens the database at path with opts. It does not touch the
	// file: SQLite opens it on the first statement.
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

// SQLiteError reports options that cannot be turned into a data source.
type SQLiteError struct {
	Path   string
	Reason string
}

func (e *SQLiteError) Error() string {
	return fmt.Sprintf("platform: sqlite %s: %s", e.Path, e.Reason)
}

type moderncSQLite struct{}

// ModerncSQLite returns the SQLite of modernc.org/sqlite, a pure Go port
// that needs no C toolchain.
func ModerncSQLite() SQLite { return moderncSQLite{} }

func (moderncSQLite) Open(path string, opts SQLiteOptions) (*sql.DB, error) {
	dsn, err := DataSource(path, opts)
	if err != nil {
		return nil, err
	}
	return sql.Open("sqlite", dsn)
}

// DataSource returns the modernc.org/sqlite data source name for path and
// opts: a file: URI, so that any character in the path is escaped and
// SQLite's own parameters (mode=ro) apply.
func DataSource(path string, opts SQLiteOptions) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", &SQLiteError{path, err.Error()}
	}
	slashed := filepath.ToSlash(abs)
	if !strings.HasPrefix(slashed, "/") {
		slashed = "/" + slashed // a windows volume: file:///C:/...
	}
	q := url.Values{}
	if opts.ReadOnly {
		q.Set("mode", "ro")
	}
	// SQLite counts milliseconds: round a shorter positive wait up, not to 0.
	busy := (opts.BusyTimeout + time.Millisecond - 1) / time.Millisecond
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", max(busy, 0)))
	if opts.ExclusiveLocking {
		q.Add("_pragma", "locking_mode(EXCLUSIVE)")
	}
	if opts.JournalMode != "" {
		if !isWord(opts.JournalMode) {
			return "", &SQLiteError{path, fmt.Sprintf("journal mode %q is not a word", opts.JournalMode)}
		}
		q.Add("_pragma", "journal_mode("+opts.JournalMode+")")
	}
	switch opts.TxLock {
	case "", "deferred", "immediate", "exclusive":
		if opts.TxLock != "" {
			q.Set("_txlock", opts.TxLock)
		}
	default:
		return "", &SQLiteError{path, fmt.Sprintf("transaction lock %q is not deferred, immediate or exclusive", opts.TxLock)}
	}
	u := url.URL{Scheme: "file", Path: slashed, RawQuery: q.Encode()}
	return u.String(), nil
}

func isWord(s string) bool {
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return s != ""
}

// SQLite primary result codes that callers act on.
const (
	SQLiteBusy     = 5  // SQLITE_BUSY: another connection holds a conflicting lock
	SQLiteLocked   = 6  // SQLITE_LOCKED: a conflict within one connection's cache
	SQLiteCantOpen = 14 // SQLITE_CANTOPEN: the file cannot be opened (missing, for read-only)
)

// SQLiteCode returns the primary SQLite result code carried by err, or 0
// when err carries none.
func SQLiteCode(err error) int {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		return coded.Code() & 0xff
	}
	return 0
}
