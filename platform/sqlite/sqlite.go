// Package sqlite is the SQLite of modernc.org/sqlite, a pure Go port
// that needs no C toolchain, for the platform package.
//
// It lives apart from package platform so that a program that needs no
// SQLite links none: platform.OS() has no SQLite, and [OS] is the same
// operating system with this one.
//
// Linking this package, by any import, gives plock its SQLite mode for a
// nil platform: it registers [OS] with plock as it initialises. A program
// that passes plock no platform only imports it for that:
//
//	import _ "github.com/rivus/collab/platform/sqlite"
package sqlite

import (
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "github.com/rivus/collab/internal/sqlitelock" // plock's SQLite mode
	"github.com/rivus/collab/internal/sqliteos"
	"github.com/rivus/collab/platform"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// init registers OS as what a nil platform means to plock, which does not
// import this package, so that a program without it links no SQLite.
func init() { sqliteos.OS = OS }

type opener struct{}

// Opener returns the SQLite of modernc.org/sqlite. Every call returns an
// equal value.
func Opener() platform.SQLite { return opener{} }

// Open opens the database at path with opts; see platform.SQLite.
func (opener) Open(path string, opts platform.SQLiteOptions) (*sql.DB, error) {
	dsn, err := DataSource(path, opts)
	if err != nil {
		return nil, err
	}
	return sql.Open("sqlite", dsn)
}

var osPlatform = sync.OnceValue(func() *platform.Platform {
	p := *platform.OS()
	p.SQLite = Opener()
	return &p
})

// OS returns the platform of the running operating system with the
// SQLite of modernc.org/sqlite: platform.OS()'s files, processes and
// clock. Every call returns the same value, so that callers who compare
// platforms (plock shares in-process turns between callers of one
// platform's SQLite) see one.
func OS() *platform.Platform { return osPlatform() }

// DataSource returns the modernc.org/sqlite data source name for path and
// opts: a file: URI, so that any character in the path is escaped and
// SQLite's own parameters (mode=ro) apply.
func DataSource(path string, opts platform.SQLiteOptions) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", &platform.SQLiteError{Path: path, Reason: err.Error()}
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
			return "", &platform.SQLiteError{Path: path, Reason: fmt.Sprintf("journal mode %q is not a word", opts.JournalMode)}
		}
		q.Add("_pragma", "journal_mode("+opts.JournalMode+")")
	}
	switch opts.TxLock {
	case "", "deferred", "immediate", "exclusive":
		if opts.TxLock != "" {
			q.Set("_txlock", opts.TxLock)
		}
	default:
		return "", &platform.SQLiteError{Path: path, Reason: fmt.Sprintf("transaction lock %q is not deferred, immediate or exclusive", opts.TxLock)}
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
