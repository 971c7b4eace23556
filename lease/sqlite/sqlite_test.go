package sqlite_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
		repotest.Exec(t, db, "UPDATE lease_schema SET version = 3")
		wantSchemaError(t, path, 3)
		var version, rows int
		if err := db.QueryRow("SELECT (SELECT version FROM lease_schema), (SELECT count(*) FROM leases)").Scan(&version, &rows); err != nil || version != 3 || rows != 1 {
			t.Fatalf("after the failed open: version %d, %d leases, %v; want 3 and 1", version, rows, err)
		}
	})
	t.Run("newer database without leases", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "leases.db")
		db := repotest.RawDB(t, path)
		repotest.Exec(t, db, "CREATE TABLE lease_schema (id INTEGER PRIMARY KEY, version INTEGER NOT NULL)")
		repotest.Exec(t, db, "INSERT INTO lease_schema VALUES (1, 3)")
		wantSchemaError(t, path, 3)
		var n int
		if err := db.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'leases'").Scan(&n); err != nil || n != 0 {
			t.Fatalf("the failed open created the leases table (%d, %v)", n, err)
		}
	})
}

// TestMigrationFromVersion1: a database of version 1, which had no broken
// column, opens as version 2 with its records as they were, and then
// stores broken tombstones.
func TestMigrationFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	db := repotest.RawDB(t, path)
	repotest.Exec(t, db, `CREATE TABLE lease_schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL) STRICT`)
	repotest.Exec(t, db, `INSERT INTO lease_schema VALUES (1, 1)`)
	repotest.Exec(t, db, `CREATE TABLE leases (key TEXT PRIMARY KEY NOT NULL, revision INTEGER NOT NULL CHECK (revision > 0),
		generation INTEGER NOT NULL, holder TEXT NOT NULL, released INTEGER NOT NULL CHECK (released IN (0, 1)),
		renewed_at TEXT NOT NULL, ttl_ns INTEGER NOT NULL) STRICT, WITHOUT ROWID`)
	old := repotest.Snap(4)
	repotest.Exec(t, db, `INSERT INTO leases VALUES ('k', 3, 4, ?, 0, ?, ?)`, string(old.Holder.Marshal()), old.RenewedAt.Format(time.RFC3339Nano), int64(old.TTL))
	r := repotest.OpenSQLite(t, platformsqlite.OS(), path)
	rec, ok, err := r.Load(t.Context(), "k")
	if err != nil || !ok || rec.Revision != 3 || rec.Snapshot != old {
		t.Fatalf("Load after the migration = %+v, %v, %v; want revision 3 of %+v", rec, ok, err, old)
	}
	broken := old
	broken.Generation, broken.Released, broken.Broken = 5, true, true
	if _, err := r.Save(t.Context(), "k", broken, 3); err != nil {
		t.Fatal(err)
	}
	if rec, _, err := r.Load(t.Context(), "k"); err != nil || rec.Snapshot != broken {
		t.Fatalf("Load of a broken tombstone = %+v, %v", rec, err)
	}
	var version int
	if err := db.QueryRow("SELECT version FROM lease_schema").Scan(&version); err != nil || version != 2 {
		t.Fatalf("version %d, %v after the migration; want 2", version, err)
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
	if !errors.As(err, &se) || !errors.As(err, &re) || se.Path != path || se.Version != version || se.Supported != 2 || re.Op != "open" {
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
func TestCorruptRow(t *testing.T) {
	tests := []struct {
		name, column, value, reason string
	}{
		{"holder not JSON", "holder", "me", "holder"},
		{"holder wrong type", "holder", `{"pid":"one"}`, "holder"},
		{"holder with trailing data", "holder", `{"host":"h","bootId":"b","pid":1,"startTime":2} {}`, "holder: platform: invalid process identity: trailing data"},
		{"renewed_at not a time", "renewed_at", "yesterday", "renewed_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "leases.db")
			r := repotest.OpenSQLite(t, platformsqlite.OS(), path)
			rev, err := r.Save(t.Context(), "task:42", repotest.Snap(1), 0)
			if err != nil {
				t.Fatal(err)
			}
			db := repotest.RawDB(t, path)
			repotest.Exec(t, db, "UPDATE leases SET "+tt.column+" = ? WHERE key = ?", tt.value, "task:42")
			_, _, err = r.Load(t.Context(), "task:42")
			repotest.WantCorrupt(t, err, "load", "task:42", path+", table leases", tt.reason)
			// A save over the row's revision, as a holder's renewal makes
			// it, refuses the row as Load does and leaves it.
			_, err = r.Save(t.Context(), "task:42", repotest.Snap(2), rev)
			repotest.WantCorrupt(t, err, "save", "task:42", path+", table leases", tt.reason)
			var stored string
			if err := db.QueryRow("SELECT " + tt.column + " FROM leases WHERE key = 'task:42'").Scan(&stored); err != nil || stored != tt.value {
				t.Fatalf("the corrupt row now holds %q, %v", stored, err)
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
