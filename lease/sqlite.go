package lease

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rivus/collab/platform"
)

// SQLiteRepository keeps records in a SQLite database, comparing
// revisions inside BEGIN IMMEDIATE transactions, so that processes
// sharing the file exclude each other's writes. Its fences are lock files
// beside the database. See the package documentation for the schema.
type SQLiteRepository struct {
	db     *sql.DB
	path   string
	writer chan struct{} // one writing transaction of this handle at a time
	fences *fileFences
	close  func() error
}

var (
	_ Repository = (*SQLiteRepository)(nil)
	_ BatchSaver = (*SQLiteRepository)(nil)
)

// sqliteSchemaVersion is the schema this package reads and writes.
const sqliteSchemaVersion = 1

// sqliteBusyTimeout is how long a transaction waits for another process's
// write lock before it fails; writes hold it for milliseconds.
const sqliteBusyTimeout = 10 * time.Second

// The schema. lease_schema holds the one row that names the version;
// it is a table of its own rather than PRAGMA user_version, so that the
// lease tables can share a database with an application's.
const (
	createSchemaTable = `CREATE TABLE IF NOT EXISTS lease_schema (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	version INTEGER NOT NULL
) STRICT`
	insertSchemaVersion = `INSERT OR IGNORE INTO lease_schema (id, version) VALUES (1, 1)`
	selectSchemaVersion = `SELECT version FROM lease_schema WHERE id = 1`
	createLeasesTable   = `CREATE TABLE IF NOT EXISTS leases (
	key        TEXT    PRIMARY KEY NOT NULL,
	revision   INTEGER NOT NULL CHECK (revision > 0),
	generation INTEGER NOT NULL,
	holder     TEXT    NOT NULL,
	released   INTEGER NOT NULL CHECK (released IN (0, 1)),
	renewed_at TEXT    NOT NULL,
	ttl_ns     INTEGER NOT NULL
) STRICT, WITHOUT ROWID`
)

// The statements of the repository.
const (
	selectLease    = `SELECT revision, generation, holder, released, renewed_at, ttl_ns FROM leases WHERE key = ?`
	selectRevision = `SELECT revision FROM leases WHERE key = ?`
	insertLease    = `INSERT INTO leases (key, revision, generation, holder, released, renewed_at, ttl_ns) VALUES (?, ?, ?, ?, ?, ?, ?)`
	updateLease    = `UPDATE leases SET revision = ?, generation = ?, holder = ?, released = ?, renewed_at = ?, ttl_ns = ? WHERE key = ?`
)

// OpenSQLiteRepository opens (creating if missing) the lease database at
// path, sets up or checks its schema, and creates the fence directory
// beside it. An unknown schema version is a *RepositoryError wrapping a
// *SchemaError, and leaves the database untouched.
func OpenSQLiteRepository(p *platform.Platform, path string) (*SQLiteRepository, error) {
	switch {
	case p == nil || p.SQLite == nil:
		return nil, &RepositoryError{Op: "open", Err: fmt.Errorf("%s: the platform has no SQLite: %w", path, errors.ErrUnsupported)}
	case p.FS == nil:
		return nil, &RepositoryError{Op: "open", Err: fmt.Errorf("%s: the platform has no file system", path)}
	}
	db, err := p.SQLite.Open(path, platform.SQLiteOptions{BusyTimeout: sqliteBusyTimeout, JournalMode: "WAL", TxLock: "immediate"})
	if err != nil {
		return nil, &RepositoryError{Op: "open", Err: err}
	}
	if err := setupSchema(db, path); err != nil {
		return nil, closeAfter(err, db)
	}
	fences := &fileFences{fs: p.FS, clock: p.GetClock(), dir: path + ".fences"}
	if err := p.FS.MkdirAll(fences.dir, dirPerm); err != nil {
		return nil, closeAfter(&RepositoryError{Op: "open", Err: err}, db)
	}
	return &SQLiteRepository{
		db:     db,
		path:   path,
		writer: make(chan struct{}, 1),
		fences: fences,
		close:  sync.OnceValue(db.Close),
	}, nil
}

// closeAfter closes db after a failed open, and returns err, joined with
// the close's error if there is one.
func closeAfter(err error, db *sql.DB) error {
	if cerr := db.Close(); cerr != nil {
		return errors.Join(err, cerr)
	}
	return err
}

// setupSchema creates the tables if missing and checks the version, in
// one transaction, so that processes opening a new database at once
// create it once.
func setupSchema(db *sql.DB, path string) error {
	fail := func(err error) error { return &RepositoryError{Op: "open", Err: fmt.Errorf("%s: %w", path, err)} }
	tx, err := db.Begin()
	if err != nil {
		return fail(err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	for _, q := range []string{createSchemaTable, insertSchemaVersion} {
		if _, err := tx.Exec(q); err != nil {
			return fail(err)
		}
	}
	var version int64
	if err := tx.QueryRow(selectSchemaVersion).Scan(&version); err != nil {
		return fail(err)
	}
	if version != sqliteSchemaVersion {
		return &RepositoryError{Op: "open", Err: &SchemaError{Path: path, Version: version, Supported: sqliteSchemaVersion}}
	}
	if _, err := tx.Exec(createLeasesTable); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

// Close closes the database. It is idempotent. Fences taken before stay
// held until their unlock.
func (r *SQLiteRepository) Close() error { return r.close() }

// Load reads key's row.
func (r *SQLiteRepository) Load(ctx context.Context, key string) (Record, bool, error) {
	if err := begin(ctx, key); err != nil {
		return Record{}, false, err
	}
	var cols [6]any
	err := r.db.QueryRowContext(ctx, selectLease, key).Scan(&cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5])
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, r.fail(ctx, "load", key, err)
	}
	rec, err := decodeRow(cols)
	if err != nil {
		where := fmt.Sprintf("%s, table leases", r.path)
		return Record{}, false, &RepositoryError{Op: "load", Key: key, Err: &CorruptRecordError{Key: key, Where: where, Err: err}}
	}
	return rec, true, nil
}

// Save compares and writes in one BEGIN IMMEDIATE transaction.
func (r *SQLiteRepository) Save(ctx context.Context, key string, s Snapshot, expected Revision) (Revision, error) {
	if err := begin(ctx, key); err != nil {
		return 0, err
	}
	var rev Revision
	err := r.inTx(ctx, "save", key, func(tx *sql.Tx) error {
		var err error
		stmts := &txStatements{tx: tx}
		defer stmts.close()
		rev, err = r.saveTx(ctx, stmts, key, s, expected)
		return err
	})
	return rev, err
}

// SaveBatch applies writes in one BEGIN IMMEDIATE transaction. A conflict
// or invalid key fails its write only; a storage failure rolls back the
// batch and fails every write.
func (r *SQLiteRepository) SaveBatch(ctx context.Context, writes []Write) ([]Revision, []error) {
	revs, errs := make([]Revision, len(writes)), make([]error, len(writes))
	if ctx.Err() != nil {
		fill(errs, context.Cause(ctx))
		return revs, errs
	}
	err := r.inTx(ctx, "save batch", "", func(tx *sql.Tx) error {
		stmts := &txStatements{tx: tx}
		defer stmts.close()
		for i, w := range writes {
			if errs[i] = ValidateKey(w.Key); errs[i] != nil {
				continue
			}
			revs[i], errs[i] = r.saveTx(ctx, stmts, w.Key, w.Snapshot, w.Expected)
			if errors.Is(errs[i], ErrRevisionConflict) {
				continue
			}
			if errs[i] != nil {
				return errs[i]
			}
		}
		return nil
	})
	if err != nil {
		clear(revs)
		fill(errs, err)
	}
	return revs, errs
}

// saveTx compares and writes one record inside stmts' transaction. It returns a
// *RevisionConflictError, or the raw storage error for inTx to wrap.
func (r *SQLiteRepository) saveTx(ctx context.Context, stmts *txStatements, key string, s Snapshot, expected Revision) (Revision, error) {
	sel, err := stmts.get(ctx, selectRevision)
	if err != nil {
		return 0, err
	}
	var cur int64
	err = sel.QueryRowContext(ctx, key).Scan(&cur)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	if Revision(cur) != expected {
		return 0, &RevisionConflictError{Key: key, Expected: expected, Actual: Revision(cur)}
	}
	next := cur + 1
	// A generation above the int64 range is stored as its two's
	// complement bits, which read back as the same Token.
	gen, holder, renewed, ttl := int64(s.Generation), string(s.Holder.Marshal()), s.RenewedAt.Format(time.RFC3339Nano), int64(s.TTL)
	query, args := updateLease, []any{next, gen, holder, s.Released, renewed, ttl, key}
	if cur == 0 {
		query, args = insertLease, []any{key, next, gen, holder, s.Released, renewed, ttl}
	}
	stmt, err := stmts.get(ctx, query)
	if err == nil {
		_, err = stmt.ExecContext(ctx, args...)
	}
	if err != nil {
		return 0, err
	}
	return Revision(next), nil
}

// txStatements prepares each statement of a save once per transaction, on
// first use: a batch of thousands of renewals prepares three statements,
// not thousands, and a single save prepares only what it runs.
type txStatements struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func (t *txStatements) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := t.stmts[query]; ok {
		return st, nil
	}
	st, err := t.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if t.stmts == nil {
		t.stmts = map[string]*sql.Stmt{}
	}
	t.stmts[query] = st
	return st, nil
}

// close closes the prepared statements; the transaction's end would too.
func (t *txStatements) close() {
	for _, st := range t.stmts {
		st.Close()
	}
}

// inTx runs fn in a BEGIN IMMEDIATE transaction, one at a time per
// handle: writers of this process queue here, woken at once, rather than
// in SQLite's busy handler, which sleeps. A *RevisionConflictError from
// fn is returned as it is, after the transaction commits (it has written
// nothing, and a batch keeps its other writes).
func (r *SQLiteRepository) inTx(ctx context.Context, op, key string, fn func(*sql.Tx) error) error {
	select {
	case r.writer <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-r.writer }()
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return r.fail(ctx, op, key, err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	ferr := fn(tx)
	if ferr != nil && !errors.Is(ferr, ErrRevisionConflict) {
		return r.fail(ctx, op, key, ferr)
	}
	if err := tx.Commit(); err != nil {
		return r.fail(ctx, op, key, err)
	}
	return ferr
}

// fail returns the cause of ctx if it ended (database/sql reports an
// interrupted statement as its own error), else a *RepositoryError.
func (r *SQLiteRepository) fail(ctx context.Context, op, key string, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return &RepositoryError{Op: op, Key: key, Err: err}
}

// Fence holds key's fence file (under the database's path plus
// ".fences") until unlock.
func (r *SQLiteRepository) Fence(ctx context.Context, key string) (func(), error) {
	return r.fences.fence(ctx, key)
}

// decodeRow converts a leases row read into driver values, reporting any
// value that a valid record cannot hold.
func decodeRow(cols [6]any) (Record, error) {
	rev, ok := cols[0].(int64)
	if !ok || rev <= 0 {
		return Record{}, fmt.Errorf("revision %v is not a positive integer", cols[0])
	}
	gen, ok := cols[1].(int64)
	if !ok {
		return Record{}, fmt.Errorf("generation %v is not an integer", cols[1])
	}
	var s Snapshot
	s.Generation = Token(gen)
	holder, ok := textOf(cols[2])
	if !ok {
		return Record{}, fmt.Errorf("holder %v is not text", cols[2])
	}
	if err := json.Unmarshal([]byte(holder), &s.Holder); err != nil {
		return Record{}, fmt.Errorf("holder: %w", err)
	}
	released, ok := cols[3].(int64)
	if !ok || released != 0 && released != 1 {
		return Record{}, fmt.Errorf("released %v is not 0 or 1", cols[3])
	}
	s.Released = released == 1
	renewed, ok := textOf(cols[4])
	if !ok {
		return Record{}, fmt.Errorf("renewed_at %v is not text", cols[4])
	}
	t, err := time.Parse(time.RFC3339Nano, renewed)
	if err != nil {
		return Record{}, fmt.Errorf("renewed_at: %w", err)
	}
	s.RenewedAt = t
	ttl, ok := cols[5].(int64)
	if !ok {
		return Record{}, fmt.Errorf("ttl_ns %v is not an integer", cols[5])
	}
	s.TTL = time.Duration(ttl)
	return Record{Snapshot: s, Revision: Revision(rev)}, nil
}

// textOf returns a TEXT value, which the driver may give as a string or
// as bytes.
func textOf(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case []byte:
		return string(v), true
	}
	return "", false
}
