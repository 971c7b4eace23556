// Package customstore is a lease repository written outside collab's
// packages, as a team would write one for its own storage, and the tests
// that hold it to collab's checks: the conformance suite (leasetest) and
// the multi-process fault campaign with its linearizability check
// (torture.Register).
//
// The repository keeps each record as one JSON row of a table in the
// application's own SQLite database (app.db), with a revision column for
// the compare-and-swap, and fences as flock files beside it, one a key.
// Fences are not SQLite locks, so that fenced work never holds the
// database's write lock while the holder's heartbeat needs it.
package customstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// Repository is a store.Repository on a table of an application's SQLite
// database.
type Repository struct {
	db     *sql.DB
	path   string
	fences string
	fs     platform.FS
}

const schema = `CREATE TABLE IF NOT EXISTS app_leases (
	key      TEXT PRIMARY KEY NOT NULL,
	revision INTEGER NOT NULL,
	record   TEXT NOT NULL
) STRICT`

// Open opens (creating if missing) app.db in dir, with the lease table,
// and the fence directory beside it. p must have SQLite (platform/sqlite's
// OS()).
func Open(p *platform.Platform, dir string) (*Repository, error) {
	path := filepath.Join(dir, "app.db")
	db, err := p.SQLite.Open(path, platform.SQLiteOptions{BusyTimeout: 10 * time.Second, JournalMode: "WAL", TxLock: "immediate"})
	if err != nil {
		return nil, &store.RepositoryError{Op: "open", Err: err}
	}
	fences := filepath.Join(dir, "app.fences")
	if _, err := db.Exec(schema); err != nil {
		return nil, &store.RepositoryError{Op: "open", Err: errors.Join(err, db.Close())}
	}
	if err := os.MkdirAll(fences, 0o700); err != nil {
		return nil, &store.RepositoryError{Op: "open", Err: errors.Join(err, db.Close())}
	}
	return &Repository{db: db, path: path, fences: fences, fs: p.FS}, nil
}

// Close closes the database.
func (r *Repository) Close() error { return r.db.Close() }

// begin checks what every call checks first: the key, then the context.
func begin(ctx context.Context, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// Load reads key's row.
func (r *Repository) Load(ctx context.Context, key string) (store.Record, bool, error) {
	if err := begin(ctx, key); err != nil {
		return store.Record{}, false, err
	}
	return r.load(ctx, r.db, "load", key)
}

// querier is a database or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (r *Repository) load(ctx context.Context, q querier, op, key string) (store.Record, bool, error) {
	var rev int64
	var data string
	err := q.QueryRowContext(ctx, `SELECT revision, record FROM app_leases WHERE key = ?`, key).Scan(&rev, &data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.Record{}, false, nil
	case err != nil:
		return store.Record{}, false, r.failed(ctx, op, key, err)
	}
	var s store.Snapshot // UnmarshalJSON validates it
	if err := json.Unmarshal([]byte(data), &s); err != nil || rev <= 0 {
		if err == nil {
			err = fmt.Errorf("revision %d is not positive", rev)
		}
		return store.Record{}, false, &store.RepositoryError{Op: op, Key: key,
			Err: &store.CorruptRecordError{Key: key, Where: r.path + " table app_leases", Err: err}}
	}
	return store.Record{Snapshot: s, Revision: store.Revision(rev)}, true, nil
}

// failed reports a storage error, or the context's cause when it ended.
func (r *Repository) failed(ctx context.Context, op, key string, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return &store.RepositoryError{Op: op, Key: key, Err: err}
}

// Save writes s over expected in one transaction: read the row, compare
// its revision, write.
func (r *Repository) Save(ctx context.Context, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	if err := (store.Write{Key: key, Snapshot: s}).Validate(); err != nil {
		return 0, err
	}
	if err := begin(ctx, key); err != nil {
		return 0, err
	}
	data, err := json.Marshal(s)
	if err != nil {
		return 0, &store.RepositoryError{Op: "save", Key: key, Err: err}
	}
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, r.failed(ctx, "save", key, err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	cur, ok, err := r.load(ctx, tx, "save", key)
	switch {
	case err != nil:
		return 0, err
	case cur.Revision != expected:
		return 0, &store.RevisionConflictError{Key: key, Expected: expected, Actual: cur.Revision}
	}
	next := expected + 1
	query := `UPDATE app_leases SET revision = ?, record = ? WHERE key = ?`
	if !ok {
		query = `INSERT INTO app_leases (revision, record, key) VALUES (?, ?, ?)`
	}
	if _, err := tx.ExecContext(ctx, query, int64(next), string(data), key); err != nil {
		return 0, r.failed(ctx, "save", key, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, r.failed(ctx, "save", key, err)
	}
	return next, nil
}

// Fence takes key's flock file, trying again every few milliseconds
// until ctx ends: flock has no waiting call that a context can stop.
func (r *Repository) Fence(ctx context.Context, key string) (func(), error) {
	if err := begin(ctx, key); err != nil {
		return nil, err
	}
	// Keys may be longer than a file name may be: name the file by a hash.
	sum := sha256.Sum256([]byte(key))
	name := filepath.Join(r.fences, hex.EncodeToString(sum[:])+".fence")
	wait := platform.Backoff{First: time.Millisecond, Max: 20 * time.Millisecond}
	for {
		l, err := r.fs.TryLock(name)
		switch {
		case err == nil:
			return func() { _ = l.Unlock() }, nil
		case !errors.Is(err, platform.ErrLocked):
			return nil, &store.RepositoryError{Op: "fence", Key: key, Err: err}
		}
		if err := wait.Wait(ctx); err != nil {
			return nil, err
		}
	}
}
