package sqlite_test

import (
	"bytes"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/lease/internal/repotest"
	"github.com/rivus/collab/lease/leasetest"
	"github.com/rivus/collab/lease/sqlite"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
	platformsqlite "github.com/rivus/collab/platform/sqlite"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRepository(t *testing.T) {
	leasetest.RunShared(t, func(t *testing.T, dir string) store.Repository {
		return repotest.OpenSQLite(t, platformsqlite.OS(), filepath.Join(dir, "leases.db"))
	})
}

// TestTwoHandles: two handles on one database see each other's
// saves, and compare revisions against each other's.
func TestTwoHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	a, b := repotest.OpenSQLite(t, platformsqlite.OS(), path), repotest.OpenSQLite(t, platformsqlite.OS(), path)
	r1, err := a.Save(t.Context(), "k", repotest.Snap(1), 0)
	if err != nil {
		t.Fatal(err)
	}
	rec, ok, err := b.Load(t.Context(), "k")
	if err != nil || !ok || rec.Revision != r1 || rec.Snapshot.Generation != 1 {
		t.Fatalf("b.Load after a.Save = %+v, %v, %v", rec, ok, err)
	}
	r2, err := b.Save(t.Context(), "k", repotest.Snap(2), r1)
	if err != nil {
		t.Fatal(err)
	}
	if rec, _, err := a.Load(t.Context(), "k"); err != nil || rec.Revision != r2 || rec.Snapshot.Generation != 2 {
		t.Fatalf("a.Load after b.Save = %+v, %v", rec, err)
	}
	_, err = a.Save(t.Context(), "k", repotest.Snap(3), r1)
	var c *store.RevisionConflictError
	if !errors.As(err, &c) || c.Expected != r1 || c.Actual != r2 {
		t.Fatalf("a stale save through a = %v, want a conflict %d/%d", err, r1, r2)
	}
}

// TestSchemaVersion: a database of an unknown schema version fails
// to open with a *SchemaError and is left as it was.
func TestSchemaVersion(t *testing.T) {
	t.Run("existing leases", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "leases.db")
		r, err := sqlite.Open(platformsqlite.OS(), path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Save(t.Context(), "k", repotest.Snap(1), 0); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		db := repotest.RawDB(t, path)
		repotest.Exec(t, db, "UPDATE lease_schema SET version = 4")
		wantSchemaError(t, path, 4)
		var version, rows int
		if err := db.QueryRow("SELECT (SELECT version FROM lease_schema), (SELECT count(*) FROM leases)").Scan(&version, &rows); err != nil || version != 4 || rows != 1 {
			t.Fatalf("after the failed open: version %d, %d leases, %v; want 4 and 1", version, rows, err)
		}
	})
	t.Run("newer database without leases", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "leases.db")
		db := repotest.RawDB(t, path)
		repotest.Exec(t, db, "CREATE TABLE lease_schema (id INTEGER PRIMARY KEY, version INTEGER NOT NULL)")
		repotest.Exec(t, db, "INSERT INTO lease_schema VALUES (1, 4)")
		wantSchemaError(t, path, 4)
		var n int
		if err := db.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'leases'").Scan(&n); err != nil || n != 0 {
			t.Fatalf("the failed open created the leases table (%d, %v)", n, err)
		}
	})
}

// The columns of the leases table as each schema version made them.
const (
	columnsV1 = `key TEXT PRIMARY KEY NOT NULL, revision INTEGER NOT NULL CHECK (revision > 0),
		generation INTEGER NOT NULL, holder TEXT NOT NULL, released INTEGER NOT NULL CHECK (released IN (0, 1)),
		renewed_at TEXT NOT NULL, ttl_ns INTEGER NOT NULL`
	columnsV2 = columnsV1 + `, broken INTEGER NOT NULL DEFAULT 0 CHECK (broken IN (0, 1))`
	columnsV3 = columnsV2 + `, value TEXT NOT NULL DEFAULT ''`
)

// createTables makes the lease tables in db as a database of schema
// version would hold them, with the leases table's columns; without
// strict, its leases table is not STRICT, as another program may have
// made it, and a column can hold a value of any type.
func createTables(t *testing.T, db *sql.DB, version int, columns string, strict bool) {
	t.Helper()
	repotest.Exec(t, db, `CREATE TABLE lease_schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL) STRICT`)
	repotest.Exec(t, db, `INSERT INTO lease_schema VALUES (1, ?)`, version)
	options := "WITHOUT ROWID"
	if strict {
		options = "STRICT, " + options
	}
	repotest.Exec(t, db, `CREATE TABLE leases (`+columns+`) `+options)
}

// insertOld adds the row of s (a held one, without a value) at key k
// with revision 3, in the columns every schema version has.
func insertOld(t *testing.T, db *sql.DB, s store.Snapshot) {
	t.Helper()
	repotest.Exec(t, db, `INSERT INTO leases (key, revision, generation, holder, released, renewed_at, ttl_ns) VALUES ('k', 3, ?, ?, 0, ?, ?)`,
		int64(s.Generation), string(s.Holder.Marshal()), s.RenewedAt.Format(time.RFC3339Nano), int64(s.TTL))
}

// TestMigration: a database of version 1, which had no broken column, or
// of version 2, which had no value column, opens as version 3 with its
// records as they were (no broken tombstone, no value), and then stores
// broken tombstones and published values. Each column is added only if
// missing.
func TestMigration(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version int
		columns string
	}{
		{"version 1", 1, columnsV1},
		{"version 2", 2, columnsV2},
		{"version 1 with the broken column", 1, columnsV2},
		{"version 2 with the value column", 2, columnsV3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "leases.db")
			db := repotest.RawDB(t, path)
			createTables(t, db, tc.version, tc.columns, true)
			old := repotest.Snap(4)
			insertOld(t, db, old)
			r, err := sqlite.Open(platformsqlite.OS(), path)
			if err != nil {
				t.Fatal(err)
			}
			rec, ok, err := r.Load(t.Context(), "k")
			if err != nil || !ok || rec.Revision != 3 || rec.Snapshot != old {
				t.Fatalf("Load after the migration = %+v, %v, %v; want revision 3 of %+v", rec, ok, err, old)
			}
			broken := old
			broken.Generation, broken.Released, broken.Broken = 5, true, true
			held := repotest.Snap(6)
			held.Value = "10.0.0.7:8080 ü"
			renewed := held
			renewed.RenewedAt = renewed.RenewedAt.Add(time.Second)
			rev := rec.Revision
			for _, s := range []store.Snapshot{broken, held, renewed} {
				if rev, err = r.Save(t.Context(), "k", s, rev); err != nil {
					t.Fatal(err)
				}
				if rec, _, err := r.Load(t.Context(), "k"); err != nil || rec.Snapshot != s {
					t.Fatalf("Load = %+v, %v; want %+v", rec, err, s)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			var version, columns int
			if err := db.QueryRow("SELECT (SELECT version FROM lease_schema), (SELECT count(*) FROM pragma_table_info('leases'))").Scan(&version, &columns); err != nil || version != 3 || columns != 9 {
				t.Fatalf("version %d, %d columns, %v after the migration; want 3 and 9", version, columns, err)
			}
			// Open again: the migration is done.
			r = repotest.OpenSQLite(t, platformsqlite.OS(), path)
			if rec, _, err := r.Load(t.Context(), "k"); err != nil || rec.Revision != rev || rec.Snapshot != renewed {
				t.Fatalf("Load after reopening = %+v, %v; want revision %d of %+v", rec, err, rev, renewed)
			}
		})
	}
}

func wantSchemaError(t *testing.T, path string, version int64) {
	t.Helper()
	r, err := sqlite.Open(platformsqlite.OS(), path)
	if err == nil {
		_ = r.Close()
		t.Fatal("opened a database of an unknown schema version")
	}
	var se *sqlite.SchemaError
	var re *store.RepositoryError
	if !errors.As(err, &se) || !errors.As(err, &re) || se.Path != path || se.Version != version || se.Supported != 3 || re.Op != "open" {
		t.Fatalf("open = %v, want a *RepositoryError wrapping a *SchemaError for version %d", err, version)
	}
}

func TestSchemaErrorMessage(t *testing.T) {
	err := &sqlite.SchemaError{Path: "x.db", Version: 7, Supported: 1}
	if got, want := err.Error(), `lease: sqlite database x.db has schema version 7; this version of collab supports 1`; got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
}

// TestOpenNilPlatform: a nil platform is the operating system's, with
// the SQLite of platform/sqlite.
func TestOpenNilPlatform(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	r := repotest.OpenSQLite(t, nil, path)
	if _, err := r.Save(t.Context(), "k", repotest.Snap(1), 0); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := repotest.RawDB(t, path).QueryRow("SELECT count(*) FROM leases").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the database at %s holds %d leases (%v), want 1", path, n, err)
	}
}

// TestSchemaSetupIsIdempotent: reopening keeps the records.
func TestSchemaSetupIsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	var rev store.Revision
	for i := range 3 {
		r, err := sqlite.Open(platformsqlite.OS(), path)
		if err != nil {
			t.Fatal(err)
		}
		rec, ok, err := r.Load(t.Context(), "k")
		if err != nil || ok != (i > 0) || rec.Revision != rev {
			t.Fatalf("open %d: Load = %+v, %v, %v", i, rec, ok, err)
		}
		if rev, err = r.Save(t.Context(), "k", repotest.Snap(store.Token(i+1)), rev); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	}
}

func TestOpenFails(t *testing.T) {
	t.Run("not a database", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "leases.db")
		garbage := []byte(strings.Repeat("not a database ", 100))
		if err := os.WriteFile(path, garbage, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := sqlite.Open(platformsqlite.OS(), path)
		var re *store.RepositoryError
		if !errors.As(err, &re) || re.Op != "open" || !strings.Contains(err.Error(), path) {
			t.Fatalf("open = %v, want a *RepositoryError naming %s", err, path)
		}
		if data, _ := os.ReadFile(path); string(data) != string(garbage) {
			t.Fatal("the file was changed")
		}
		if _, err := os.Stat(path + ".fences"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a failed open created the fence directory (%v)", err)
		}
	})
	t.Run("no SQLite", func(t *testing.T) {
		f := platformtest.New(t, platformtest.WithoutSQLite())
		_, err := sqlite.Open(f.Platform, filepath.Join(f.Dir, "leases.db"))
		var re *store.RepositoryError
		if !errors.As(err, &re) || !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("open = %v, want a *RepositoryError matching errors.ErrUnsupported", err)
		}
	})
	t.Run("fence directory", func(t *testing.T) {
		f := platformtest.New(t)
		f.FS.SetFault(repotest.FaultOn(platformtest.OpMkdirAll, ".fences"))
		_, err := sqlite.Open(f.Platform, filepath.Join(f.Dir, "leases.db"))
		repotest.WantRepositoryError(t, err, "open", "")
	})
}

// TestCorruptRow: a row that a valid record cannot hold fails its
// key only, in Load and Save, naming the database, and is left as it is.
// The row publishes a value, which the save publishes too, as a
// holder's renewal does.
func TestCorruptRow(t *testing.T) {
	const published = "10.0.0.7:8080"
	tests := []struct {
		name, column string
		value        any
		reason       string
		loose        bool // the leases table is not STRICT (createTables), so that it can hold a BLOB
	}{
		{"holder not JSON", "holder", "me", "holder", false},
		{"holder wrong type", "holder", `{"pid":"one"}`, "holder", false},
		{"holder with trailing data", "holder", `{"host":"h","bootId":"b","pid":1,"startTime":2} {}`, "holder: platform: invalid process identity: trailing data", false},
		{"renewed_at not a time", "renewed_at", "yesterday", "renewed_at", false},
		{"value too long", "value", strings.Repeat("v", store.MaxValueLen+1), "value: 1025 bytes, more than 1024", false},
		{"value with NUL", "value", published + "\x00", "value: contains NUL", false},
		{"value not UTF-8", "value", published + "\xc3(", "value: not valid UTF-8", false},
		// The bytes of the value the save publishes, as a BLOB.
		{"value a BLOB", "value", []byte(published), "value: BLOB, not text", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "leases.db")
			db := repotest.RawDB(t, path)
			if tt.loose {
				createTables(t, db, 3, columnsV3, false)
			}
			r := repotest.OpenSQLite(t, platformsqlite.OS(), path)
			held, renewal := repotest.Snap(1), repotest.Snap(2)
			held.Value, renewal.Value = published, published
			rev, err := r.Save(t.Context(), "task:42", held, 0)
			if err != nil {
				t.Fatal(err)
			}
			repotest.Exec(t, db, "UPDATE leases SET "+tt.column+" = ? WHERE key = ?", tt.value, "task:42")
			_, _, err = r.Load(t.Context(), "task:42")
			repotest.WantCorrupt(t, err, "load", "task:42", path+", table leases", tt.reason)
			var fe *store.SnapshotFieldError
			if tt.column == "value" && (!errors.As(err, &fe) || fe.Field != "value") {
				t.Fatalf("Load = %v, want it to wrap a *SnapshotFieldError of the field value", err)
			}
			// A save over the row's revision, as a holder's renewal makes
			// it, refuses the row as Load does and leaves it.
			_, err = r.Save(t.Context(), "task:42", renewal, rev)
			repotest.WantCorrupt(t, err, "save", "task:42", path+", table leases", tt.reason)
			var stored any
			var revision int64
			if err := db.QueryRow("SELECT "+tt.column+", revision FROM leases WHERE key = 'task:42'").Scan(&stored, &revision); err != nil ||
				!reflect.DeepEqual(stored, tt.value) || revision != int64(rev) {
				t.Fatalf("the corrupt row now holds %q at revision %d, %v", stored, revision, err)
			}
			if _, err := r.Save(t.Context(), "other", repotest.Snap(1), 0); err != nil {
				t.Fatalf("another key beside a corrupt one: %v", err)
			}
		})
	}
}

// TestFaults: a failing fence file is a *RepositoryError, and the
// fence is free once the fault is gone.
func TestFaults(t *testing.T) {
	for _, key := range []string{"k", strings.Repeat("/", 100)} {
		f := platformtest.New(t)
		r := repotest.OpenSQLite(t, f.Platform, filepath.Join(f.Dir, "leases.db"))
		f.FS.SetFault(func(op platformtest.Op, name string) error {
			if op == platformtest.OpTryLock || op == platformtest.OpMkdirAll {
				return repotest.ErrInjected
			}
			return nil
		})
		repotest.WantRepositoryError(t, repotest.Fence(t, r, key), "fence", key)
		f.FS.SetFault(nil)
		if err := repotest.Fence(t, r, key); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLargeGeneration: a token above the int64 range reads back
// unchanged.
func TestLargeGeneration(t *testing.T) {
	r := repotest.OpenSQLite(t, platformsqlite.OS(), filepath.Join(t.TempDir(), "leases.db"))
	gen := ^store.Token(0) - 5
	if _, err := r.Save(t.Context(), "k", repotest.Snap(gen), 0); err != nil {
		t.Fatal(err)
	}
	if rec, _, err := r.Load(t.Context(), "k"); err != nil || rec.Snapshot.Generation != gen {
		t.Fatalf("Load = %+v, %v; want generation %d", rec, err, gen)
	}
}

// BenchmarkSave measures a SQLite save against its floor: the same
// transaction (BEGIN IMMEDIATE, SELECT the revision, UPDATE the row,
// COMMIT) in raw database/sql on the same schema, options and file. The
// sqlite sub-benchmark runs one floor transaction (untimed) before each
// save, so that both see the same disk, and reports the ratio of their
// times as x-floor.
func BenchmarkSave(b *testing.B) {
	b.Run("sqlite-floor", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "leases.db")
		repotest.OpenSQLite(b, platformsqlite.OS(), path) // the schema
		floor := repotest.FloorTx(b, path)
		b.ResetTimer()
		for range b.N {
			floor(b)
		}
	})
	b.Run("sqlite", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "leases.db")
		r := repotest.OpenSQLite(b, platformsqlite.OS(), path)
		floor := repotest.FloorTx(b, path)
		rev, err := r.Save(b.Context(), "task:42", repotest.Sample, 0)
		if err != nil {
			b.Fatal(err)
		}
		var floorTime time.Duration
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			start := time.Now()
			floor(b)
			floorTime += time.Since(start)
			b.StartTimer()
			if rev, err = r.Save(b.Context(), "task:42", repotest.Sample, rev); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(b.Elapsed())/float64(floorTime), "x-floor")
	})
}

// BenchmarkSaveBatch measures renewing 16 leases in one batch against 16
// single saves, the choice a manager makes every heartbeat.
func BenchmarkSaveBatch(b *testing.B) {
	const leases = 16
	setup := func(b *testing.B) (*sqlite.Repository, []store.Write) {
		r := repotest.OpenSQLite(b, platformsqlite.OS(), filepath.Join(b.TempDir(), "leases.db"))
		writes := make([]store.Write, leases)
		for i := range writes {
			key := "task:" + strings.Repeat("x", i)
			rev, err := r.Save(b.Context(), key, repotest.Sample, 0)
			if err != nil {
				b.Fatal(err)
			}
			writes[i] = store.Write{Key: key, Snapshot: repotest.Sample, Expected: rev}
		}
		return r, writes
	}
	b.Run("batch", func(b *testing.B) {
		r, writes := setup(b)
		b.ResetTimer()
		for range b.N {
			revs, errs := r.SaveBatch(b.Context(), writes)
			for i := range writes {
				if errs[i] != nil {
					b.Fatal(errs[i])
				}
				writes[i].Expected = revs[i]
			}
		}
	})
	b.Run("single", func(b *testing.B) {
		r, writes := setup(b)
		b.ResetTimer()
		for range b.N {
			for i, w := range writes {
				rev, err := r.Save(b.Context(), w.Key, w.Snapshot, w.Expected)
				if err != nil {
					b.Fatal(err)
				}
				writes[i].Expected = rev
			}
		}
	})
}

// TestFilesArePrivate: the records name processes and hosts, so a new
// database, its WAL and its shared-memory file are readable by their
// owner only, whatever the umask; the fence files are too.
func TestFilesArePrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	r := repotest.OpenSQLite(t, platformsqlite.OS(), path)
	if _, err := r.Save(t.Context(), "k", repotest.Snap(1), 0); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v; want it private to its owner", filepath.Base(name), st.Mode().Perm())
		}
	}
}

// TestLinkAtPathRefused: a link planted where the database belongs is
// refused by name, and its target (a file of the caller's) is left as it
// was, not made a database.
func TestLinkAtPathRefused(t *testing.T) {
	dir := t.TempDir()
	victim, path := filepath.Join(dir, "victim"), filepath.Join(dir, "leases.db")
	if err := os.WriteFile(victim, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	r, err := sqlite.Open(platformsqlite.OS(), path)
	if err == nil {
		r.Close()
	}
	if !errors.Is(err, platform.ErrSymlink) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open on a link = %v, want an error naming %s, matching ErrSymlink", err, path)
	}
	if st, err := os.Stat(victim); err != nil || st.Size() != 0 {
		t.Fatalf("the link's target changed: %v, %v", st, err)
	}
}

// TestBrokenMeansNothingInAHeldRow: a writer of schema version 1 that
// opened the database before its migration acquires over a broken
// tombstone and leaves broken set in a held row; it reads as held, not
// broken, and not as corrupt.
func TestBrokenMeansNothingInAHeldRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	r := repotest.OpenSQLite(t, platformsqlite.OS(), path)
	held := repotest.Snap(3)
	if _, err := r.Save(t.Context(), "k", held, 0); err != nil {
		t.Fatal(err)
	}
	repotest.Exec(t, repotest.RawDB(t, path), "UPDATE leases SET broken = 1 WHERE key = 'k'")
	rec, ok, err := r.Load(t.Context(), "k")
	if err != nil || !ok || rec.Snapshot.Broken || rec.Snapshot.Released {
		t.Fatalf("Load = %+v, %v, %v; want the held record, not broken", rec, ok, err)
	}
}

// TestOpenReadOnly: a read-only open reads a lease database, refuses to
// write, and creates nothing at a missing path or beside a foreign file.
func TestOpenReadOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "leases.db")
	rw, err := sqlite.Open(nil, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Save(t.Context(), "k", repotest.Snap(1), 0); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	ro, err := sqlite.OpenReadOnly(nil, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if rec, ok, err := ro.Load(t.Context(), "k"); err != nil || !ok || rec.Snapshot.Generation != 1 {
		t.Fatalf("Load = %+v, %v, %v", rec, ok, err)
	}
	if _, err := ro.Save(t.Context(), "k", repotest.Snap(2), 1); err == nil {
		t.Fatal("a read-only repository saved")
	}
	for _, bad := range []string{filepath.Join(dir, "missing.db"), filepath.Join(dir, "other", "missing.db")} {
		if r, err := sqlite.OpenReadOnly(nil, bad); err == nil {
			r.Close()
			t.Fatalf("OpenReadOnly(%s) opened a missing database", bad)
		}
		if _, err := os.Stat(bad); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("OpenReadOnly(%s) made it: %v", bad, err)
		}
	}
}

// TestOpenReadOnlyVersion2: a read-only open, which cannot migrate,
// reads a database of version 2 as holding no values, and leaves its
// file as it was, without a fence directory. It refuses version 1, which
// had no broken column, and a newer version.
func TestOpenReadOnlyVersion2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	db := repotest.RawDB(t, path)
	createTables(t, db, 2, columnsV2, true)
	old := repotest.Snap(4)
	insertOld(t, db, old)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := sqlite.OpenReadOnly(platformsqlite.OS(), path)
	if err != nil {
		t.Fatal(err)
	}
	rec, ok, err := ro.Load(t.Context(), "k")
	if err != nil || !ok || rec.Revision != 3 || rec.Snapshot != old || rec.Snapshot.Value != "" {
		t.Fatalf("Load = %+v, %v, %v; want revision 3 of %+v, without a value", rec, ok, err, old)
	}
	if keys, err := ro.Keys(t.Context()); err != nil || !slices.Equal(keys, []string{"k"}) {
		t.Fatalf("Keys = %q, %v", keys, err)
	}
	if _, err := ro.Save(t.Context(), "k", repotest.Snap(5), 3); err == nil {
		t.Fatal("a read-only repository saved")
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("the read-only open changed the database (%v)", err)
	}
	if _, err := os.Stat(path + ".fences"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the read-only open made the fence directory (%v)", err)
	}

	for _, version := range []int64{1, 4} {
		path := filepath.Join(t.TempDir(), "leases.db")
		db := repotest.RawDB(t, path)
		createTables(t, db, int(version), columnsV3, true)
		r, err := sqlite.OpenReadOnly(platformsqlite.OS(), path)
		if err == nil {
			r.Close()
		}
		var se *sqlite.SchemaError
		if !errors.As(err, &se) || se.Version != version || se.Supported != 3 {
			t.Fatalf("OpenReadOnly of version %d = %v, want a *SchemaError", version, err)
		}
	}
}
