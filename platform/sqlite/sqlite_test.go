package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/internal/sqliteos"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
	"github.com/rivus/collab/platform/sqlite"
	modernc "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// openDB opens path and closes the handle at the end of the test.
func openDB(t *testing.T, path string, opts platform.SQLiteOptions) *sql.DB {
	t.Helper()
	db, err := sqlite.Opener().Open(path, opts)
	if err != nil {
		t.Fatalf("Open(%q, %+v): %v", path, opts, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close %s: %v", path, err)
		}
	})
	return db
}

// sqliteCode returns the primary SQLite result code in err, or -1.
func sqliteCode(err error) int {
	var e *modernc.Error
	if errors.As(err, &e) {
		return e.Code() & 0xff
	}
	return -1
}

func mustExec(t *testing.T, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// wantDir checks that dir holds exactly the names want, hidden ones
// included, sorted.
func wantDir(t *testing.T, dir string, want ...string) {
	t.Helper()
	if got := platformtest.DirNames(t, dir); !slices.Equal(got, want) {
		t.Fatalf("%s holds %q, want %q", dir, got, want)
	}
}

// uriPath is an absolute path as a file: URI spells it: with slashes, and
// a leading one before a windows volume.
func uriPath(abs string) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

func TestDataSourceOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	tests := []struct {
		name       string
		opts       platform.SQLiteOptions
		wantMode   string
		wantPragma []string
		wantTxLock string
	}{
		{"defaults", platform.SQLiteOptions{}, "", []string{"busy_timeout(0)"}, ""},
		{"read only", platform.SQLiteOptions{ReadOnly: true}, "ro", []string{"busy_timeout(0)"}, ""},
		{"busy timeout", platform.SQLiteOptions{BusyTimeout: 1500 * time.Millisecond}, "", []string{"busy_timeout(1500)"}, ""},
		{"exclusive locking", platform.SQLiteOptions{ExclusiveLocking: true}, "", []string{"busy_timeout(0)", "locking_mode(EXCLUSIVE)"}, ""},
		{"journal mode", platform.SQLiteOptions{JournalMode: "WAL"}, "", []string{"busy_timeout(0)", "journal_mode(WAL)"}, ""},
		{"deferred", platform.SQLiteOptions{TxLock: "deferred"}, "", []string{"busy_timeout(0)"}, "deferred"},
		{"immediate", platform.SQLiteOptions{TxLock: "immediate"}, "", []string{"busy_timeout(0)"}, "immediate"},
		{"exclusive", platform.SQLiteOptions{TxLock: "exclusive"}, "", []string{"busy_timeout(0)"}, "exclusive"},
		{"all", platform.SQLiteOptions{ReadOnly: true, BusyTimeout: time.Second, ExclusiveLocking: true, JournalMode: "truncate", TxLock: "immediate"},
			"ro", []string{"busy_timeout(1000)", "locking_mode(EXCLUSIVE)", "journal_mode(truncate)"}, "immediate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn, err := sqlite.DataSource(path, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(dsn)
			if err != nil {
				t.Fatalf("DataSource = %q: %v", dsn, err)
			}
			q := u.Query()
			if u.Scheme != "file" || u.Path != uriPath(path) || q.Get("mode") != tt.wantMode ||
				!slices.Equal(q["_pragma"], tt.wantPragma) || q.Get("_txlock") != tt.wantTxLock {
				t.Errorf("DataSource = %q: scheme %q path %q mode %q pragmas %q txlock %q", dsn, u.Scheme, u.Path, q.Get("mode"), q["_pragma"], q.Get("_txlock"))
			}
		})
	}
}

func TestDataSourceRelativePath(t *testing.T) {
	dsn, err := sqlite.DataSource("x.db", platform.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs("x.db")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Path != uriPath(abs) {
		t.Fatalf("sqlite.DataSource(relative) = %q (%v), want the absolute path %q", dsn, err, abs)
	}
}

func TestDataSourceRejects(t *testing.T) {
	tests := []struct {
		name string
		opts platform.SQLiteOptions
	}{
		{"journal mode with a statement", platform.SQLiteOptions{JournalMode: "wal); DROP TABLE t; --"}},
		{"journal mode with a space", platform.SQLiteOptions{JournalMode: "wal mode"}},
		{"journal mode with a digit", platform.SQLiteOptions{JournalMode: "wal2"}},
		{"journal mode not ASCII", platform.SQLiteOptions{JournalMode: "w\u00e4l"}},
		{"unknown tx lock", platform.SQLiteOptions{TxLock: "bogus"}},
		{"tx lock in capitals", platform.SQLiteOptions{TxLock: "EXCLUSIVE"}},
		{"tx lock with a statement", platform.SQLiteOptions{TxLock: "immediate; DROP TABLE t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "x.db")
			dsn, err := sqlite.DataSource(path, tt.opts)
			var se *platform.SQLiteError
			if !errors.As(err, &se) || se.Path != path {
				t.Fatalf("DataSource = %q, %v; want an *platform.SQLiteError for %s", dsn, err, path)
			}
			db, err := sqlite.Opener().Open(path, tt.opts)
			if !errors.As(err, &se) || db != nil {
				t.Fatalf("Open = %v, %v; want no handle and an *platform.SQLiteError", db, err)
			}
			wantDir(t, dir)
		})
	}
}

// TestSQLiteOpenEscapesPath: characters that mean something in a URI
// reach the file name intact, and no other file is created.
func TestSQLiteOpenEscapesPath(t *testing.T) {
	for _, name := range []string{"plain", "with space", "what?mode=ro", "100%", "100%25", "hash#frag", "a?b%c#d &e=f;g+h"} {
		t.Run(name, func(t *testing.T) {
			// SQLite reports the path with symbolic links resolved.
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, name+" dir")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name+".db")
			db := openDB(t, path, platform.SQLiteOptions{})
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Open touched the file: %v", err)
			}
			mustExec(t, db, "CREATE TABLE t (x)")
			wantDir(t, root, name+" dir")
			wantDir(t, dir, name+".db")
			var file string
			if err := db.QueryRow("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file); err != nil {
				t.Fatal(err)
			}
			if file != path {
				t.Fatalf("SQLite opened %q, want %q", file, path)
			}
		})
	}
}

func TestSQLitePragmasApply(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db := openDB(t, path, platform.SQLiteOptions{BusyTimeout: 1500 * time.Millisecond, ExclusiveLocking: true, JournalMode: "truncate"})
	tests := []struct{ pragma, want string }{
		{"busy_timeout", "1500"},
		{"locking_mode", "exclusive"},
		{"journal_mode", "truncate"},
	}
	for _, tt := range tests {
		var got string
		if err := db.QueryRow("PRAGMA " + tt.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("PRAGMA %s = %q, want %q", tt.pragma, got, tt.want)
		}
	}
}

func TestSQLiteReadOnlyMissingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "missing.db")
	db := openDB(t, path, platform.SQLiteOptions{ReadOnly: true})
	var n int
	err := db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n)
	if code := sqliteCode(err); code != sqlite3.SQLITE_CANTOPEN {
		t.Fatalf("first statement on a missing read-only database = %v (code %d), want SQLITE_CANTOPEN", err, code)
	}
	wantDir(t, dir)
}

func TestSQLiteReadOnlyExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	rw := openDB(t, path, platform.SQLiteOptions{})
	mustExec(t, rw, "CREATE TABLE t (x); INSERT INTO t VALUES (1)")
	ro := openDB(t, path, platform.SQLiteOptions{ReadOnly: true})
	var n int
	if err := ro.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("read = %d, %v; want 1", n, err)
	}
	_, err := ro.Exec("INSERT INTO t VALUES (2)")
	if code := sqliteCode(err); code != sqlite3.SQLITE_READONLY {
		t.Fatalf("write on a read-only handle = %v (code %d), want SQLITE_READONLY", err, code)
	}
}

// TestSQLiteExclusiveLocking: a connection in exclusive locking mode
// keeps the file locked after its write has committed, until it closes.
func TestSQLiteExclusiveLocking(t *testing.T) {
	for _, exclusive := range []bool{false, true} {
		t.Run(map[bool]string{false: "normal", true: "exclusive"}[exclusive], func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "x.db")
			holder := openDB(t, path, platform.SQLiteOptions{ExclusiveLocking: exclusive})
			conn, err := holder.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			mustExec(t, conn, "CREATE TABLE t (x); INSERT INTO t VALUES (1)")
			other := openDB(t, path, platform.SQLiteOptions{})
			var n int
			err = other.QueryRow("SELECT count(*) FROM t").Scan(&n)
			switch code := sqliteCode(err); {
			case exclusive && code != sqlite3.SQLITE_BUSY:
				t.Fatalf("read beside an exclusive writer = %v (code %d), want SQLITE_BUSY", err, code)
			case !exclusive && (err != nil || n != 1):
				t.Fatalf("read beside a normal writer = %d, %v; want 1", n, err)
			}
			if err := conn.Close(); err != nil {
				t.Fatal(err)
			}
			if err := holder.Close(); err != nil {
				t.Fatal(err)
			}
			if err := other.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
				t.Fatalf("read after the writer closed = %d, %v; want 1", n, err)
			}
		})
	}
}

// TestSQLiteTxLock: BEGIN takes the lock TxLock names before any
// statement of the transaction runs.
func TestSQLiteTxLock(t *testing.T) {
	tests := []struct {
		txLock              string
		readBusy, writeBusy bool
	}{
		{"", false, false},
		{"deferred", false, false},
		{"immediate", false, true},
		{"exclusive", true, true},
	}
	for _, tt := range tests {
		t.Run("txlock="+tt.txLock, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			setup := openDB(t, path, platform.SQLiteOptions{})
			mustExec(t, setup, "CREATE TABLE t (x)")
			holder := openDB(t, path, platform.SQLiteOptions{TxLock: tt.txLock})
			tx, err := holder.Begin()
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }()
			other := openDB(t, path, platform.SQLiteOptions{})
			var n int
			readErr := other.QueryRow("SELECT count(*) FROM t").Scan(&n)
			_, writeErr := other.Exec("INSERT INTO t VALUES (1)")
			if got := sqliteCode(readErr) == sqlite3.SQLITE_BUSY; got != tt.readBusy || (!got && readErr != nil) {
				t.Errorf("read beside an open transaction: %v, want busy %v", readErr, tt.readBusy)
			}
			if got := sqliteCode(writeErr) == sqlite3.SQLITE_BUSY; got != tt.writeBusy || (!got && writeErr != nil) {
				t.Errorf("write beside an open transaction: %v, want busy %v", writeErr, tt.writeBusy)
			}
		})
	}
}

// TestSQLiteCode: platform.SQLiteCode reads the codes of this driver's
// errors.
func TestSQLiteCode(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "x.db")
	holder, err := sqlite.Opener().Open(name, platform.SQLiteOptions{ExclusiveLocking: true})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.Exec("CREATE TABLE t(x)"); err != nil {
		t.Fatal(err)
	}
	other, err := sqlite.Opener().Open(name, platform.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.Exec("SELECT * FROM t")
	if got := platform.SQLiteCode(err); got != platform.SQLiteBusy {
		t.Errorf("SQLiteCode(%v) = %d, want SQLiteBusy", err, got)
	}
	missing, err := sqlite.Opener().Open(filepath.Join(dir, "missing.db"), platform.SQLiteOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer missing.Close()
	_, err = missing.Exec("SELECT 1 FROM sqlite_master")
	if got := platform.SQLiteCode(err); got != platform.SQLiteCantOpen {
		t.Errorf("SQLiteCode(%v) = %d, want SQLiteCantOpen", err, got)
	}
	if got := platform.SQLiteCode(errors.New("plain")); got != 0 {
		t.Errorf("SQLiteCode(plain error) = %d, want 0", got)
	}
}

// TestOS: one platform for every call, with platform.OS()'s parts and
// this package's SQLite.
func TestOS(t *testing.T) {
	p := sqlite.OS()
	if p != sqlite.OS() {
		t.Fatal("sqlite.OS() returned two platforms")
	}
	base := platform.OS()
	if p.FS != base.FS || p.Process != base.Process || p.Clock != base.Clock {
		t.Fatalf("sqlite.OS() = %+v, want the parts of platform.OS() = %+v", p, base)
	}
	if p.SQLite != sqlite.Opener() {
		t.Fatalf("sqlite.OS().SQLite = %v, want sqlite.Opener()", p.SQLite)
	}
	if base.SQLite != nil {
		t.Fatal("sqlite.OS() gave platform.OS() a SQLite")
	}
}

// TestOSRegisteredForPlock: linking this package registers OS as what a
// nil platform means to plock, which does not import it.
func TestOSRegisteredForPlock(t *testing.T) {
	if sqliteos.OS == nil {
		t.Fatal("linking platform/sqlite registered no OS with plock")
	}
	if got := sqliteos.OS(); got != sqlite.OS() {
		t.Fatalf("the registered OS gives %+v, want sqlite.OS() = %+v", got, sqlite.OS())
	}
}
