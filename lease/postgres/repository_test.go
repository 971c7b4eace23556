package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/leasetest"
	"github.com/rivus/collab/lease/postgres"
)

func TestConformance(t *testing.T) {
	testURL(t)
	leasetest.Run(t, func(t *testing.T) lease.Repository {
		return openRepo(t, newSchema(t))
	})
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
	var rev lease.Revision
	for i := range 3 {
		r := openRepo(t, schema)
		rec, ok, err := r.Load(t.Context(), "k")
		if err != nil || ok != (i > 0) || rec.Revision != rev {
			t.Fatalf("open %d: Load = %+v, %v, %v", i, rec, ok, err)
		}
		if rev, err = r.Save(t.Context(), "k", lease.Snapshot{Generation: lease.Token(i)}, rev); err != nil {
			t.Fatal(err)
		}
		_ = r.Close()
	}
}

// TestSchemaVersion: a database of an unknown schema version fails to
// open with a *SchemaError and is left as it was.
func TestSchemaVersion(t *testing.T) {
	schema := newSchema(t)
	r := openRepo(t, schema)
	if _, err := r.Save(t.Context(), "k", lease.Snapshot{Generation: 1}, 0); err != nil {
		t.Fatal(err)
	}
	url := testURL(t)
	qualified := func(table string) string { return pgx.Identifier{schema, table}.Sanitize() }
	execSQL(t, url, "UPDATE "+qualified("collab_lease_schema")+" SET version = 2")
	_, err := postgres.Open(t.Context(), url, postgres.WithSchema(schema))
	var se *lease.SchemaError
	var re *lease.RepositoryError
	if !errors.As(err, &se) || !errors.As(err, &re) || se.Version != 2 || se.Supported != 1 || re.Op != "open" {
		t.Fatalf("open = %v, want a *RepositoryError wrapping a *SchemaError for version 2", err)
	}
	conn := rawConn(t, url)
	defer conn.Close(context.Background())
	var version, rows int
	err = conn.QueryRow(t.Context(), "SELECT (SELECT version FROM "+qualified("collab_lease_schema")+"), (SELECT count(*) FROM "+qualified("collab_leases")+")").Scan(&version, &rows)
	if err != nil || version != 2 || rows != 1 {
		t.Fatalf("after the failed open: version %d, %d leases, %v; want 2 and 1", version, rows, err)
	}
}

// TestCorruptRow: a row that a valid record cannot hold fails its key
// only, naming the table and key, and is left as it is.
func TestCorruptRow(t *testing.T) {
	tests := []struct {
		name, column, value, reason string
	}{
		{"holder not JSON", "holder", "garbage", "holder"},
		{"holder wrong type", "holder", `{"pid":"one"}`, "holder"},
		{"renewed_at not a time", "renewed_at", "yesterday", "renewed_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := newSchema(t)
			r := openRepo(t, schema)
			if _, err := r.Save(t.Context(), "task:42", lease.Snapshot{Generation: 1}, 0); err != nil {
				t.Fatal(err)
			}
			table := pgx.Identifier{schema, "collab_leases"}.Sanitize()
			url := testURL(t)
			execSQL(t, url, "UPDATE "+table+" SET "+tt.column+" = $1 WHERE key = $2", tt.value, "task:42")
			_, _, err := r.Load(t.Context(), "task:42")
			var re *lease.RepositoryError
			var ce *lease.CorruptRecordError
			if !errors.As(err, &re) || !errors.As(err, &ce) || re.Op != "load" || re.Key != "task:42" || ce.Key != "task:42" ||
				!strings.Contains(ce.Where, table) || !strings.Contains(ce.Err.Error(), tt.reason) || !errors.Is(err, lease.ErrCorruptRecord) {
				t.Fatalf("Load = %v, want a *RepositoryError wrapping a *CorruptRecordError naming %s and %s", err, table, tt.reason)
			}
			conn := rawConn(t, url)
			defer conn.Close(context.Background())
			var stored string
			if err := conn.QueryRow(t.Context(), "SELECT "+tt.column+" FROM "+table+" WHERE key = 'task:42'").Scan(&stored); err != nil || stored != tt.value {
				t.Fatalf("the corrupt row now holds %q, %v", stored, err)
			}
			rev, err := r.Save(t.Context(), "other", lease.Snapshot{Generation: 1}, 0)
			if err != nil {
				t.Fatalf("another key beside a corrupt one: %v", err)
			}
			if rec, ok, err := r.Load(t.Context(), "other"); err != nil || !ok || rec.Revision != rev {
				t.Fatalf("Load of another key = %+v, %v, %v", rec, ok, err)
			}
		})
	}
}

// TestKeys lists every key, in byte order.
func TestKeys(t *testing.T) {
	r := openRepo(t, newSchema(t))
	keys := []string{"b", "a/b", "B", "ä", "a", "Z", "a b"}
	for _, k := range keys {
		if _, err := r.Save(t.Context(), k, lease.Snapshot{Generation: 1}, 0); err != nil {
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
	if _, err := r.Save(t.Context(), "k", lease.Snapshot{Generation: gen}, 0); err != nil {
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
			var re *lease.RepositoryError
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
	r1, err := a.Save(t.Context(), "k", lease.Snapshot{Generation: 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := b.Save(t.Context(), "k", lease.Snapshot{Generation: 2}, r1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Save(t.Context(), "k", lease.Snapshot{Generation: 3}, r1)
	var c *lease.RevisionConflictError
	if !errors.As(err, &c) || c.Expected != r1 || c.Actual != r2 {
		t.Fatalf("a stale save through a = %v, want a conflict %d/%d", err, r1, r2)
	}
}
