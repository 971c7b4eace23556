package postgres_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/leasetest"
	"github.com/rivus/collab/lease/postgres"
	"github.com/rivus/collab/lease/store"
)

func TestConformance(t *testing.T) {
	testURL(t)
	leasetest.RunShared(t, func(t *testing.T, dir string) store.Repository {
		return openRepo(t, schemaIn(t, dir))
	})
}

// schemaIn returns the schema of the repository that leasetest keeps in
// dir. The first handle on dir, which the suite opens in the test itself,
// takes a fresh schema (dropped when its test ends) and names it in a
// file there, where the other handles and the suite's other process find
// it.
func schemaIn(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "schema")
	name, err := os.ReadFile(path)
	if err == nil {
		return string(name)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	schema := newSchema(t)
	if err := os.WriteFile(path, []byte(schema), 0o600); err != nil {
		t.Fatal(err)
	}
	return schema
}

// TestSchemaSetupIsIdempotent: opening a new schema from several
// goroutines at once succeeds for all, and reopening keeps the records.
func TestSchemaSetupIsIdempotent(t *testing.T) {
	schema := newSchema(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			r, err := postgres.Open(context.Background(), testURL(t), postgres.WithSchema(schema))
			if err != nil {
				t.Error(err)
				return
			}
			_ = r.Close()
		})
	}
	wg.Wait()
	var rev store.Revision
	for i := range 3 {
		r := openRepo(t, schema)
		rec, ok, err := r.Load(t.Context(), "k")
		if err != nil || ok != (i > 0) || rec.Revision != rev {
			t.Fatalf("open %d: Load = %+v, %v, %v", i, rec, ok, err)
		}
		if rev, err = r.Save(t.Context(), "k", snap(lease.Token(i+1)), rev); err != nil {
			t.Fatal(err)
		}
		_ = r.Close()
	}
}

func TestSchemaErrorMessage(t *testing.T) {
	err := &postgres.SchemaError{Where: "database collab on db.example, table collab_leases", Version: 7, Supported: 1}
	want := `lease: database collab on db.example, table collab_leases has schema version 7; this version of collab supports 1`
	if got := err.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
}

// TestSchemaVersion: a database of an unknown schema version fails to
// open with a *SchemaError and is left as it was.
func TestSchemaVersion(t *testing.T) {
	schema := newSchema(t)
	r := openRepo(t, schema)
	if _, err := r.Save(t.Context(), "k", snap(1), 0); err != nil {
		t.Fatal(err)
	}
	url := testURL(t)
	qualified := func(table string) string { return pgx.Identifier{schema, table}.Sanitize() }
	execSQL(t, url, "UPDATE "+qualified("collab_lease_schema")+" SET version = 4")
	_, err := postgres.Open(t.Context(), url, postgres.WithSchema(schema))
	var se *postgres.SchemaError
	var re *store.RepositoryError
	if !errors.As(err, &se) || !errors.As(err, &re) || se.Version != 4 || se.Supported != 3 || re.Op != "open" {
		t.Fatalf("open = %v, want a *RepositoryError wrapping a *SchemaError for version 4", err)
	}
	conn := rawConn(t, url)
	defer conn.Close(context.Background())
	var version, rows int
	err = conn.QueryRow(t.Context(), "SELECT (SELECT version FROM "+qualified("collab_lease_schema")+"), (SELECT count(*) FROM "+qualified("collab_leases")+")").Scan(&version, &rows)
	if err != nil || version != 4 || rows != 1 {
		t.Fatalf("after the failed open: version %d, %d leases, %v; want 4 and 1", version, rows, err)
	}
}

// TestMigration: tables of version 1, which had no broken column, and of
// version 2, which had no value column, open as version 3 with their
// records as they were (no value), and then store broken tombstones and
// values. A column that an interrupted or manual migration already added
// is kept.
func TestMigration(t *testing.T) {
	tests := []struct {
		name      string
		version   int
		withValue bool // the value column is there already
	}{
		{"version 1", 1, false},
		{"version 2", 2, false},
		{"version 2 with a value column", 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := newSchema(t)
			url := testURL(t)
			old := snap(4)
			createOldTables(t, url, schema, tt.version, old)
			if tt.withValue {
				execSQL(t, url, "ALTER TABLE "+pgx.Identifier{schema, "collab_leases"}.Sanitize()+" ADD COLUMN value text NOT NULL DEFAULT ''")
			}
			r := openRepo(t, schema)
			rec, ok, err := r.Load(t.Context(), "k")
			if err != nil || !ok || rec.Revision != 3 || !rec.Snapshot.RenewedAt.Equal(old.RenewedAt) || rec.Snapshot.Generation != 4 ||
				rec.Snapshot.Holder != old.Holder || rec.Snapshot.TTL != old.TTL || rec.Snapshot.Broken || rec.Snapshot.Value != "" {
				t.Fatalf("Load after the migration = %+v, %v, %v; want revision 3 of %+v", rec, ok, err, old)
			}
			if v := schemaVersionOf(t, url, schema); v != 3 {
				t.Fatalf("the tables are at version %d after the migration, want 3", v)
			}
			broken := old
			broken.Generation, broken.Released, broken.Broken = 5, true, true
			rev, err := r.Save(t.Context(), "k", broken, 3)
			if err != nil {
				t.Fatal(err)
			}
			if rec, _, err := r.Load(t.Context(), "k"); err != nil || !rec.Snapshot.Broken || !rec.Snapshot.Released || rec.Snapshot.Generation != 5 {
				t.Fatalf("Load of a broken tombstone = %+v, %v", rec, err)
			}
			held := old
			held.Generation, held.Value = 6, "10.0.0.7:8080 ü"
			if rev, err = r.Save(t.Context(), "k", held, rev); err != nil {
				t.Fatal(err)
			}
			// A second open finds version 3 and changes nothing.
			r2 := openRepo(t, schema)
			if rec, _, err := r2.Load(t.Context(), "k"); err != nil || rec.Revision != rev || rec.Snapshot.Value != held.Value || rec.Snapshot.Generation != 6 {
				t.Fatalf("Load of a value after the migration = %+v, %v; want revision %d with value %q", rec, err, rev, held.Value)
			}
		})
	}
}

// createOldTables creates the tables of schema version 1 or 2 in schema,
// as those versions did, with one row, key k at revision 3, holding s
// (unbroken, without its value).
func createOldTables(t *testing.T, url, schema string, version int, s store.Snapshot) {
	t.Helper()
	qualified := func(table string) string { return pgx.Identifier{schema, table}.Sanitize() }
	execSQL(t, url, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	execSQL(t, url, "CREATE TABLE "+qualified("collab_lease_schema")+" (id integer PRIMARY KEY CHECK (id = 1), version integer NOT NULL)")
	execSQL(t, url, "INSERT INTO "+qualified("collab_lease_schema")+" VALUES (1, $1)", version)
	columns := `key text PRIMARY KEY, revision bigint NOT NULL CHECK (revision > 0),
		generation bigint NOT NULL, holder text NOT NULL, released boolean NOT NULL, renewed_at text NOT NULL, ttl_ns bigint NOT NULL`
	if version >= 2 {
		columns += ", broken boolean NOT NULL DEFAULT false"
	}
	execSQL(t, url, "CREATE TABLE "+qualified("collab_leases")+" ("+columns+")")
	execSQL(t, url, "INSERT INTO "+qualified("collab_leases")+" (key, revision, generation, holder, released, renewed_at, ttl_ns) VALUES ('k', 3, $1, $2, $3, $4, $5)",
		int64(s.Generation), string(s.Holder.Marshal()), s.Released, s.RenewedAt.Format(time.RFC3339Nano), int64(s.TTL))
}

// schemaVersionOf returns the version recorded in schema's tables.
func schemaVersionOf(t *testing.T, url, schema string) int {
	t.Helper()
	conn := rawConn(t, url)
	defer conn.Close(context.Background())
	var v int
	if err := conn.QueryRow(t.Context(), "SELECT version FROM "+pgx.Identifier{schema, "collab_lease_schema"}.Sanitize()+" WHERE id = 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestReadOnly: a read-only open reads tables of version 3, and those of
// version 2 (not yet migrated) as records without a value, in a session
// that refuses every write (as a role that may only SELECT would), and
// leaves them as they were. Tables of version 1, and none, fail to open.
func TestReadOnly(t *testing.T) {
	url := testURL(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	roURL := url + sep + "default_transaction_read_only=on"
	openRO := func(t *testing.T, schema string) (*postgres.Repository, error) {
		r, err := postgres.Open(t.Context(), roURL, postgres.WithSchema(schema), postgres.ReadOnly())
		if err == nil {
			t.Cleanup(func() { _ = r.Close() })
		}
		return r, err
	}
	old := snap(4)

	t.Run("the session refuses writes", func(t *testing.T) {
		schema := newSchema(t)
		conn := rawConn(t, roURL)
		defer conn.Close(context.Background())
		if _, err := conn.Exec(t.Context(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err == nil {
			t.Fatal("a read-only session created a schema")
		}
	})
	t.Run("version 3", func(t *testing.T) {
		schema := newSchema(t)
		held := old
		held.Value = "10.0.0.7:8080"
		rev, err := openRepo(t, schema).Save(t.Context(), "k", held, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := openRO(t, schema)
		if err != nil {
			t.Fatal(err)
		}
		if rec, ok, err := r.Load(t.Context(), "k"); err != nil || !ok || rec.Revision != rev || rec.Snapshot.Value != held.Value {
			t.Fatalf("read-only Load = %+v, %v, %v; want revision %d with value %q", rec, ok, err, rev, held.Value)
		}
	})
	t.Run("version 2", func(t *testing.T) {
		schema := newSchema(t)
		createOldTables(t, url, schema, 2, old)
		table := pgx.Identifier{schema, "collab_leases"}.Sanitize()
		before := rawRow(t, url, table, "k")
		r, err := openRO(t, schema)
		if err != nil {
			t.Fatal(err)
		}
		rec, ok, err := r.Load(t.Context(), "k")
		if err != nil || !ok || rec.Revision != 3 || rec.Snapshot.Generation != old.Generation || rec.Snapshot.Holder != old.Holder ||
			!rec.Snapshot.RenewedAt.Equal(old.RenewedAt) || rec.Snapshot.TTL != old.TTL || rec.Snapshot.Value != "" {
			t.Fatalf("read-only Load of version 2 = %+v, %v, %v; want revision 3 of %+v without a value", rec, ok, err, old)
		}
		if keys, err := r.Keys(t.Context()); err != nil || strings.Join(keys, "|") != "k" {
			t.Fatalf("Keys = %q, %v", keys, err)
		}
		if v := schemaVersionOf(t, url, schema); v != 2 {
			t.Fatalf("the tables are at version %d after a read-only open, want 2", v)
		}
		if after := rawRow(t, url, table, "k"); after != before {
			t.Fatalf("the row now holds %s, was %s", after, before)
		}
	})
	t.Run("version 1", func(t *testing.T) {
		schema := newSchema(t)
		createOldTables(t, url, schema, 1, old)
		_, err := openRO(t, schema)
		if se, ok := errors.AsType[*postgres.SchemaError](err); !ok || se.Version != 1 || se.Supported != 3 {
			t.Fatalf("read-only open of version 1 = %v, want a *SchemaError", err)
		}
		if v := schemaVersionOf(t, url, schema); v != 1 {
			t.Fatalf("the tables are at version %d after a read-only open, want 1", v)
		}
	})
	t.Run("no tables", func(t *testing.T) {
		_, err := openRO(t, newSchema(t))
		if re, ok := errors.AsType[*store.RepositoryError](err); !ok || re.Op != "open" {
			t.Fatalf("read-only open of no tables = %v, want a *RepositoryError of open", err)
		}
	})
}

// TestCorruptRow: a row that a valid record cannot hold (garbage, a
// holder that is not a valid process identity, a TTL or generation out of
// range, a value too long) fails its key only, in Load, Save and
// SaveBatch, naming the table, key and field, and is left as it is.
func TestCorruptRow(t *testing.T) {
	tests := []struct {
		name, column string
		value        any
		reason       string
	}{
		{"holder not JSON", "holder", "garbage", "holder"},
		{"holder wrong type", "holder", `{"pid":"one"}`, `holder: platform: invalid process identity field "pid": wrong type`},
		{"holder empty object", "holder", `{}`, `holder: platform: invalid process identity field "bootId": missing`},
		{"holder null", "holder", `null`, `holder: platform: invalid process identity field "bootId": missing`},
		{"holder pid only", "holder", `{"pid":-7}`, `holder: platform: invalid process identity field "bootId": missing`},
		{"holder negative pid", "holder", `{"host":"h","bootId":"b","pid":-7,"startTime":9}`, `holder: platform: invalid process identity field "pid": -7 is not a process id`},
		{"holder pid too large", "holder", `{"host":"h","bootId":"b","pid":4294967297,"startTime":9}`, `"pid": 4294967297 is not a process id`},
		{"holder pid of 10 digits", "holder", `{"host":"h","bootId":"b","pid":2147483648,"startTime":9}`, `"pid": 2147483648 is not a process id`},
		{"holder without start time", "holder", `{"host":"h","bootId":"b","pid":7}`, `holder: platform: invalid process identity field "startTime": missing`},
		{"holder start time 0", "holder", `{"host":"h","bootId":"b","pid":7,"startTime":0}`, `"startTime": missing`},
		{"holder empty boot id", "holder", `{"host":"h","bootId":"","pid":7,"startTime":9}`, `"bootId": missing`},
		{"holder with trailing data", "holder", `{"host":"h","bootId":"b","pid":7,"startTime":9} {}`, "holder: platform: invalid process identity: trailing data"},
		{"holder host of 300 bytes", "holder", `{"host":"` + strings.Repeat("h", 300) + `","bootId":"b","pid":7,"startTime":9}`, `"host": 300 bytes, more than 255`},
		{"holder boot id of 200 bytes", "holder", `{"host":"h","bootId":"` + strings.Repeat("b", 200) + `","pid":7,"startTime":9}`, `"bootId": 200 bytes, more than 128`},
		{"holder host of 128 two-byte characters", "holder", `{"host":"` + strings.Repeat("é", 128) + `","bootId":"b","pid":7,"startTime":9}`, `"host": 256 bytes, more than 255`},
		{"negative ttl", "ttl_ns", int64(-5 * time.Second), "ttl: -5s is not positive"},
		{"zero ttl", "ttl_ns", int64(0), "ttl: 0s is not positive"},
		{"generation 0", "generation", int64(0), "generation: 0 is not a generation"},
		{"renewed_at not a time", "renewed_at", "yesterday", "renewed_at"},
		{"renewed_at 30 February", "renewed_at", "2026-02-30T00:00:00Z", "renewed_at"},
		{"renewed_at 29 February 2100", "renewed_at", "2100-02-29T00:00:00Z", "renewed_at"},
		{"renewed_at hour 24", "renewed_at", "2026-01-01T24:00:00Z", "renewed_at"},
		{"value over 1024 bytes", "value", strings.Repeat("v", 1025), "value: 1025 bytes, more than 1024"},
		{"value of 513 two-byte characters", "value", strings.Repeat("é", 513), "value: 1026 bytes, more than 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := newSchema(t)
			r := openRepo(t, schema)
			rev, err := r.Save(t.Context(), "task:42", snap(1), 0)
			if err != nil {
				t.Fatal(err)
			}
			otherRev, err := r.Save(t.Context(), "other", snap(1), 0)
			if err != nil {
				t.Fatal(err)
			}
			table := pgx.Identifier{schema, "collab_leases"}.Sanitize()
			url := testURL(t)
			execSQL(t, url, "UPDATE "+table+" SET "+tt.column+" = $1 WHERE key = $2", tt.value, "task:42")
			before := rawRow(t, url, table, "task:42")
			wantCorrupt := func(what, op string, err error) {
				t.Helper()
				var re *store.RepositoryError
				var ce *store.CorruptRecordError
				if !errors.As(err, &re) || !errors.As(err, &ce) || re.Op != op || re.Key != "task:42" || ce.Key != "task:42" ||
					!strings.Contains(ce.Where, table) || !strings.Contains(ce.Err.Error(), tt.reason) || !errors.Is(err, store.ErrCorruptRecord) {
					t.Fatalf("%s = %v, want a *RepositoryError of %s wrapping a *CorruptRecordError naming %s, the key and %s", what, err, op, table, tt.reason)
				}
			}
			_, _, err = r.Load(t.Context(), "task:42")
			wantCorrupt("Load", "load", err)
			// A save over the row's revision, as a holder's renewal makes
			// it, and a create.
			_, err = r.Save(t.Context(), "task:42", snap(2), rev)
			wantCorrupt("Save over its revision", "save", err)
			_, err = r.Save(t.Context(), "task:42", snap(2), 0)
			wantCorrupt("Save of a new record", "save", err)
			revs, errs := r.SaveBatch(t.Context(), []store.Write{
				{Key: "task:42", Snapshot: snap(2), Expected: rev},
				{Key: "other", Snapshot: snap(2), Expected: otherRev},
			})
			wantCorrupt("SaveBatch", "save", errs[0])
			if errs[1] != nil {
				t.Fatalf("the other write of a batch with a corrupt row: %v", errs[1])
			}
			if after := rawRow(t, url, table, "task:42"); after != before {
				t.Fatalf("the corrupt row now holds %s, was %s", after, before)
			}
			if rec, ok, err := r.Load(t.Context(), "other"); err != nil || !ok || rec.Revision != revs[1] {
				t.Fatalf("Load of another key = %+v, %v, %v; want revision %d", rec, ok, err, revs[1])
			}
			if _, err := r.Save(t.Context(), "other", snap(3), revs[1]); err != nil {
				t.Fatalf("another key beside a corrupt one: %v", err)
			}
			if keys, err := r.Keys(t.Context()); err != nil || strings.Join(keys, "|") != "other|task:42" {
				t.Fatalf("Keys = %q, %v; want both keys", keys, err)
			}
		})
	}
}

// TestSaveOverUnusualValidRow: a valid row in a form other than this
// package writes (spaces, another field order, an unknown field, a time
// with a comma or a 10-digit fraction), or with a value that the update's
// check does not recognise (not the one written, not ASCII), is written
// over, by Save and SaveBatch, as any valid row.
func TestSaveOverUnusualValidRow(t *testing.T) {
	tests := []struct{ name, column, value string }{
		{"holder with spaces", "holder", `{ "host": "h", "bootId": "b", "pid": 7, "startTime": 9 }`},
		{"holder fields reordered", "holder", `{"pid":7,"startTime":9,"bootId":"b","host":"h"}`},
		{"holder unknown field", "holder", `{"host":"h","bootId":"b","pid":7,"startTime":9,"future":[1,2]}`},
		{"holder pid of 10 digits", "holder", `{"host":"h","bootId":"b","pid":2147483647,"startTime":9}`},
		{"holder start time of 20 digits", "holder", `{"host":"h","bootId":"b","pid":7,"startTime":18446744073709551615}`},
		{"holder host with DEL", "holder", "{\"host\":\"h\x7f\",\"bootId\":\"b\",\"pid\":7,\"startTime\":9}"},
		{"renewed_at 10 fraction digits", "renewed_at", "2026-01-01T00:00:00.1234567891Z"},
		{"renewed_at with a decimal comma", "renewed_at", "2026-01-01T00:00:00,5+02:00"},
		{"renewed_at 29 February 2000", "renewed_at", "2000-02-29T00:00:00Z"},
		{"value of other characters", "value", strings.Repeat("é", 512)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := newSchema(t)
			r := openRepo(t, schema)
			rev, err := r.Save(t.Context(), "k", snap(1), 0)
			if err != nil {
				t.Fatal(err)
			}
			table := pgx.Identifier{schema, "collab_leases"}.Sanitize()
			execSQL(t, testURL(t), "UPDATE "+table+" SET "+tt.column+" = $1 WHERE key = $2", tt.value, "k")
			if _, _, err := r.Load(t.Context(), "k"); err != nil {
				t.Fatalf("Load of a valid row: %v", err)
			}
			s2 := snap(2)
			s2.Value = "10.0.0.7:8080"
			if rev, err = r.Save(t.Context(), "k", s2, rev); err != nil {
				t.Fatalf("Save over a valid row: %v", err)
			}
			if rec, _, err := r.Load(t.Context(), "k"); err != nil || rec.Revision != rev || rec.Snapshot.Generation != 2 || rec.Snapshot.Value != s2.Value {
				t.Fatalf("Load after Save = %+v, %v", rec, err)
			}
			execSQL(t, testURL(t), "UPDATE "+table+" SET "+tt.column+" = $1 WHERE key = $2", tt.value, "k")
			revs, errs := r.SaveBatch(t.Context(), []store.Write{{Key: "k", Snapshot: snap(3), Expected: rev}, {Key: "k", Snapshot: snap(4), Expected: rev}})
			if errs[0] != nil || revs[0] != rev+1 {
				t.Fatalf("SaveBatch over a valid row = %d, %v; want revision %d", revs[0], errs[0], rev+1)
			}
			if c, ok := errors.AsType[*store.RevisionConflictError](errs[1]); !ok || c.Actual != rev+1 {
				t.Fatalf("the second write over the same revision = %v, want a conflict with %d", errs[1], rev+1)
			}
			// A stale revision over such a row is still a conflict.
			execSQL(t, testURL(t), "UPDATE "+table+" SET "+tt.column+" = $1 WHERE key = $2", tt.value, "k")
			if _, err := r.Save(t.Context(), "k", snap(5), rev); !errors.Is(err, store.ErrRevisionConflict) {
				t.Fatalf("a stale save = %v, want a conflict", err)
			}
		})
	}
}

// rawRow returns key's row as the database holds it.
func rawRow(t *testing.T, url, table, key string) string {
	t.Helper()
	conn := rawConn(t, url)
	defer conn.Close(context.Background())
	var row string
	if err := conn.QueryRow(t.Context(), "SELECT t::text FROM "+table+" t WHERE key = $1", key).Scan(&row); err != nil {
		t.Fatal(err)
	}
	return row
}

// TestKeys lists every key, in byte order.
func TestKeys(t *testing.T) {
	r := openRepo(t, newSchema(t))
	keys := []string{"b", "a/b", "B", "ä", "a", "Z", "a b"}
	for _, k := range keys {
		if _, err := r.Save(t.Context(), k, snap(1), 0); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.Keys(t.Context())
	want := []string{"B", "Z", "a", "a b", "a/b", "b", "ä"}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("Keys = %q, %v; want %q", got, err, want)
	}
}

// TestLargeGeneration: a token above the int64 range reads back
// unchanged.
func TestLargeGeneration(t *testing.T) {
	r := openRepo(t, newSchema(t))
	gen := ^lease.Token(0) - 5
	if _, err := r.Save(t.Context(), "k", snap(gen), 0); err != nil {
		t.Fatal(err)
	}
	if rec, _, err := r.Load(t.Context(), "k"); err != nil || rec.Snapshot.Generation != gen {
		t.Fatalf("Load = %+v, %v; want generation %d", rec, err, gen)
	}
}

// TestOpenFails: an unparsable URL and an unreachable server are
// *RepositoryErrors of open; the first does not repeat the URL, which
// may hold a password.
func TestOpenFails(t *testing.T) {
	tests := []struct{ name, url string }{
		{"unparsable", "postgres://user:secret@[::1/db"},
		{"unreachable", "postgres://user:secret@127.0.0.1:1/db?connect_timeout=5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := postgres.Open(t.Context(), tt.url)
			if err == nil {
				_ = r.Close()
				t.Fatal("opened")
			}
			var re *store.RepositoryError
			if !errors.As(err, &re) || re.Op != "open" || strings.Contains(err.Error(), "secret") {
				t.Fatalf("Open = %v, want a *RepositoryError of open without the password", err)
			}
		})
	}
}

// TestTwoHandles: two repositories on one table (two processes, as far
// as the server can tell) compare revisions against each other's saves.
func TestTwoHandles(t *testing.T) {
	schema := newSchema(t)
	a, b := openRepo(t, schema), openRepo(t, schema)
	r1, err := a.Save(t.Context(), "k", snap(1), 0)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := b.Save(t.Context(), "k", snap(2), r1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Save(t.Context(), "k", snap(3), r1)
	var c *store.RevisionConflictError
	if !errors.As(err, &c) || c.Expected != r1 || c.Actual != r2 {
		t.Fatalf("a stale save through a = %v, want a conflict %d/%d", err, r1, r2)
	}
}
