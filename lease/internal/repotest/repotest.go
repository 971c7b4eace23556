// Package repotest holds what the tests of lease and of its repositories
// share: a valid snapshot, an injected fault, the checks of the errors
// every repository returns, and the SQLite repository with raw access to
// its database.
// Only tests import it.
package repotest

import (
	"database/sql"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	leasesqlite "github.com/rivus/collab/lease/sqlite"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
	"github.com/rivus/collab/platform/sqlite"
)

// Sample is a valid snapshot, of generation 7.
var Sample = store.Snapshot{
	Generation: 7,
	Holder:     platform.Identity{Host: "bench", BootID: "0f4c2b7e-5a1d-4e8b-9c3f-1d2e3f4a5b6c", PID: 4242, StartTime: 123456, PIDNamespace: 4026531836},
	RenewedAt:  time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	TTL:        time.Minute,
}

// Snap returns Sample with generation gen: a valid record.
func Snap(gen store.Token) store.Snapshot {
	s := Sample
	s.Generation = gen
	return s
}

// ErrInjected is the fault the fake file system injects.
var ErrInjected = errors.New("injected fault")

// FaultOn fails op on files whose name ends in suffix.
func FaultOn(op platformtest.Op, suffix string) func(platformtest.Op, string) error {
	return func(o platformtest.Op, name string) error {
		if o == op && strings.HasSuffix(name, suffix) {
			return ErrInjected
		}
		return nil
	}
}

// WantRepositoryError checks that err is a *store.RepositoryError of op
// on key wrapping ErrInjected.
func WantRepositoryError(t *testing.T, err error, op, key string) {
	t.Helper()
	var re *store.RepositoryError
	if !errors.As(err, &re) || re.Op != op || re.Key != key || !errors.Is(err, ErrInjected) {
		t.Fatalf("got %v, want a *RepositoryError of %s on %q wrapping the injected fault", err, op, key)
	}
}

// WantCorrupt checks that err is the corrupt record error of op on key,
// naming where the record is stored and the reason.
func WantCorrupt(t *testing.T, err error, op, key, where, reason string) {
	t.Helper()
	var re *store.RepositoryError
	var ce *store.CorruptRecordError
	if !errors.As(err, &re) || !errors.As(err, &ce) {
		t.Fatalf("got %v, want a *RepositoryError wrapping a *CorruptRecordError", err)
	}
	if re.Op != op || re.Key != key || ce.Key != key || ce.Where != where || !errors.Is(err, store.ErrCorruptRecord) {
		t.Fatalf("got %+v wrapping %+v, want op %q, key %q, where %q", *re, *ce, op, key, where)
	}
	if msg := err.Error(); !strings.Contains(msg, where) || !strings.Contains(msg, reason) {
		t.Fatalf("message %q does not name the file %s and the reason %q", msg, where, reason)
	}
}

// Fence takes key's fence and releases it.
func Fence(t *testing.T, r store.Repository, key string) error {
	unlock, err := r.Fence(t.Context(), key)
	if err == nil {
		unlock()
	}
	return err
}

// OpenSQLite opens the SQLite repository at path on p, closed at the end
// of the test.
func OpenSQLite(t testing.TB, p *platform.Platform, path string) *leasesqlite.Repository {
	t.Helper()
	r, err := leasesqlite.Open(p, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// RawDB opens the SQLite lease database at path without the repository,
// closed at the end of the test.
func RawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	// Private, as the store makes its own: it refuses a database others
	// may read.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		_ = f.Close()
	}
	db, err := sqlite.Opener().Open(path, platform.SQLiteOptions{BusyTimeout: 10 * time.Second, JournalMode: "WAL", TxLock: "immediate"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// Exec runs query on db, or fails the test.
func Exec(t testing.TB, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// FloorTx adds a row of its own to the SQLite lease database at path and
// returns one raw compare-and-write transaction on it: the floor against
// which the benchmarks of the repository and the manager measure.
func FloorTx(b *testing.B, path string) func(*testing.B) {
	db := RawDB(b, path)
	holder := string(Sample.Holder.Marshal())
	renewed := Sample.RenewedAt.Format(time.RFC3339Nano)
	ttl := int64(Sample.TTL)
	Exec(b, db, "INSERT INTO leases (key, revision, generation, holder, released, renewed_at, ttl_ns) VALUES ('floor', 1, 7, ?, 0, ?, ?)",
		holder, renewed, ttl)
	return func(b *testing.B) {
		ctx := b.Context()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		var rev int64
		if err := tx.QueryRowContext(ctx, "SELECT revision FROM leases WHERE key = ?", "floor").Scan(&rev); err != nil {
			b.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE leases SET revision = ?, generation = ?, holder = ?, released = ?, renewed_at = ?, ttl_ns = ? WHERE key = ?",
			rev+1, 7, holder, false, renewed, ttl, "floor"); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}
