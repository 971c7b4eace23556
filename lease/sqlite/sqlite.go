package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rivus/collab/lease/internal/check"
	"github.com/rivus/collab/lease/internal/keyfile"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	platformsqlite "github.com/rivus/collab/platform/sqlite"
)

// Repository keeps records in a SQLite database, comparing revisions
// inside BEGIN IMMEDIATE transactions, so that processes sharing the file
// exclude each other's writes. Its fences are lock files beside the
// database. See the package documentation for the schema.
type Repository struct {
	db     *sql.DB
	path   string
	writer chan struct{} // one writing transaction of this handle at a time
	fences *keyfile.Locks
	wakes  *keyfile.Wakes // in the fences' directory; nil when read-only
	close  func() error

	// selectLease reads a row: the package's, or selectLeaseV2 for a
	// database of version 2 opened read-only.
	selectLease string

	mu       sync.Mutex
	prepared map[string]*sql.Stmt // the statements of saves, prepared on first use
}

var (
	_ store.Repository = (*Repository)(nil)
	_ store.BatchSaver = (*Repository)(nil)
	_ store.Lister     = (*Repository)(nil)
)

// SchemaError reports a SQLite lease database whose schema version this
// package does not know, most likely written by a newer version. The
// database is left untouched.
type SchemaError struct {
	Path      string
	Version   int64 // the version found
	Supported int64 // the version this package reads and writes
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("lease: sqlite database %s has schema version %d; this version of collab supports %d", e.Path, e.Version, e.Supported)
}

// errIsDir: the path names a directory, where the database should be.
var errIsDir = errors.New("is a directory, not a SQLite database (a file store is dir:PATH)")

// schemaVersion is the schema this package reads and writes.
const schemaVersion = 3

// The versions before schemaVersion that setupSchema migrates: version 1
// had no broken column, version 2 no value column (addedColumns).
// OpenReadOnly, which cannot migrate, also reads versionWithoutValue.
const (
	oldestVersion       = 1
	versionWithoutValue = 2
)

// busyTimeout is how long a transaction waits for another process's
// write lock before it fails; writes hold it for milliseconds.
const busyTimeout = 10 * time.Second

// The schema. lease_schema holds the one row that names the version;
// it is a table of its own rather than PRAGMA user_version, so that the
// lease tables can share a database with an application's.
const (
	createSchemaTable = `CREATE TABLE IF NOT EXISTS lease_schema (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	version INTEGER NOT NULL
) STRICT`
	insertSchemaVersion = `INSERT OR IGNORE INTO lease_schema (id, version) VALUES (1, 3)`
	selectSchemaVersion = `SELECT version FROM lease_schema WHERE id = 1`
	createLeasesTable   = `CREATE TABLE IF NOT EXISTS leases (
	key        TEXT    PRIMARY KEY NOT NULL,
	revision   INTEGER NOT NULL CHECK (revision > 0),
	generation INTEGER NOT NULL,
	holder     TEXT    NOT NULL,
	released   INTEGER NOT NULL CHECK (released IN (0, 1)),
	renewed_at TEXT    NOT NULL,
	ttl_ns     INTEGER NOT NULL,
	broken     INTEGER NOT NULL DEFAULT 0 CHECK (broken IN (0, 1)),
	value      TEXT    NOT NULL DEFAULT ''
) STRICT, WITHOUT ROWID`
	// The migration from an older version: hasColumn, then addColumn of
	// each of addedColumns that the table lacks.
	hasColumn  = `SELECT count(*) FROM pragma_table_info('leases') WHERE name = ?`
	addColumn  = `ALTER TABLE leases ADD COLUMN `
	setVersion = `UPDATE lease_schema SET version = 3 WHERE id = 1`
)

// addedColumns are the columns that versions before schemaVersion lack,
// in the order of the versions that added them, each with the definition
// of createLeasesTable. The defaults are what the older versions meant:
// no row of version 1 is broken, and no row of version 2 has a value.
var addedColumns = []struct{ name, definition string }{
	{"broken", `INTEGER NOT NULL DEFAULT 0 CHECK (broken IN (0, 1))`}, // version 2
	{"value", `TEXT NOT NULL DEFAULT ''`},                             // version 3
}

// The statements of the repository. The statements of a save number
// their parameters alike, and take the same arguments (saveArgs):
//
//	?1 the new revision   ?5 renewed_at   ?9  whether ?3 parses as a holder
//	?2 generation         ?6 ttl_ns       ?10 broken
//	?3 holder             ?7 key          ?11 value
//	?4 released           ?8 the revision expected
const (
	selectLease = `SELECT revision, generation, holder, released, renewed_at, ttl_ns, broken, value FROM leases WHERE key = ?`
	// selectLease of a database of version 2, which has no values.
	selectLeaseV2 = `SELECT revision, generation, holder, released, renewed_at, ttl_ns, broken, '' FROM leases WHERE key = ?`
	// A new record, if the key has none.
	insertLease = `INSERT INTO leases (key, revision, generation, holder, released, renewed_at, ttl_ns, broken, value)` +
		` VALUES (?7, ?1, ?2, ?3, ?4, ?5, ?6, ?10, ?11) ON CONFLICT (key) DO NOTHING`
	// Over a row read and decoded in this transaction.
	updateLease = `UPDATE leases SET revision = ?1, generation = ?2, holder = ?3, released = ?4, renewed_at = ?5, ttl_ns = ?6,` +
		` broken = ?10, value = ?11 WHERE key = ?7`
)

// rowIsValid is the condition on the stored row under which
// updateChecked writes over it. It must accept only rows that decodeRow
// accepts, so that no update replaces a row that Load reports as
// corrupt; it may refuse more (then saveTx reads and decodes the row).
// It accepts the rows a holder renews: their holder is the one the
// update writes (?3, which saveTx has parsed: ?9 is true), their
// renewed_at is in the form time.RFC3339Nano writes, with a date that
// exists (date() moves a day that does not to another), and their value
// is the text the update writes (?11, which check.Save has validated):
// SQL cannot check UTF-8, so a holder that changes its value reads and
// decodes its row.
var rowIsValid = `?9 AND holder = ?3 AND revision > 0` +
	` AND typeof(value) = 'text' AND value = ?11` +
	` AND typeof(generation) = 'integer' AND generation <> 0 AND typeof(ttl_ns) = 'integer' AND ttl_ns > 0` +
	` AND typeof(released) = 'integer' AND released IN (0, 1) AND typeof(broken) = 'integer' AND broken IN (0, released)` +
	` AND typeof(renewed_at) = 'text'` +
	// Text functions stop at a NUL: as many bytes as characters rules one
	// out (and anything but ASCII, which the form below never holds).
	` AND length(CAST(renewed_at AS BLOB)) = length(renewed_at)` +
	` AND renewed_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-5][0-9]:[0-5][0-9]*'` +
	` AND date(substr(renewed_at, 1, 10)) = substr(renewed_at, 1, 10) AND substr(renewed_at, 12, 2) <= '23'` +
	// The zone follows the seconds, or their fraction of 1 to 9 digits.
	` AND (` + zone(`substr(renewed_at, 20)`) +
	` OR substr(renewed_at, 20, 1) = '.'` +
	` AND length(substr(renewed_at, 21)) - length(ltrim(substr(renewed_at, 21), '0123456789')) BETWEEN 1 AND 9` +
	` AND ` + zone(`ltrim(substr(renewed_at, 21), '0123456789')`) + `)`

// updateChecked writes over revision ?8 of key ?7, if rowIsValid
// accepts the row.
var updateChecked = updateLease + ` AND revision = ?8 AND ` + rowIsValid

// zone returns the condition that the text expression z is a zone
// of RFC 3339: Z, or an offset within ±23:59.
func zone(z string) string {
	return `(` + z + ` = 'Z' OR ` + z + ` GLOB '[+-][01][0-9]:[0-5][0-9]' OR ` + z + ` GLOB '[+-]2[0-3]:[0-5][0-9]')`
}

// Open opens (creating if missing) the lease database at path on p, sets
// up or checks its schema, and creates the fence directory beside it. A
// nil p is the operating system with modernc.org/sqlite (sqlite.OS() of
// platform/sqlite); a p without SQLite or FS is a *store.RepositoryError.
// An unknown schema version is a *store.RepositoryError wrapping a
// *SchemaError, and leaves the database untouched.
func Open(p *platform.Platform, path string) (*Repository, error) {
	p, path, err := checkPath(p, path)
	if err != nil {
		return nil, err
	}
	// The records name processes and hosts: private, as the file store's
	// are. A new database is created empty with mode 0600 before SQLite
	// opens it, and SQLite gives its journal and WAL files the database's
	// mode; an existing database keeps the mode its owner gave it.
	if err := p.FS.CreateExclusive(path, nil, 0o600); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, &store.RepositoryError{Op: "open", Err: err}
	}
	db, err := p.SQLite.Open(path, platform.SQLiteOptions{BusyTimeout: busyTimeout, JournalMode: "WAL", TxLock: "immediate"})
	if err != nil {
		return nil, &store.RepositoryError{Op: "open", Err: err}
	}
	// A connection the pool opens runs the options' pragmas, which take
	// SQLite's locks for an instant: a write that meets one sleeps in
	// SQLite's busy handler, 1, 2, 5, 10 ms and more (a release that
	// waited 8 to 32 ms before its successor was woken). Kept idle, the
	// connections of a handle's concurrent readers and its writer are
	// opened once.
	db.SetMaxIdleConns(maxIdleConns)
	if err := setupSchema(db, path); err != nil {
		return nil, closeAfter(err, db)
	}
	fencesDir := path + ".fences"
	if err := p.FS.MkdirAll(fencesDir, keyfile.DirPerm); err != nil {
		return nil, closeAfter(&store.RepositoryError{Op: "open", Err: err}, db)
	}
	if err := platform.TrustedDir(p.FS, fencesDir); err != nil {
		return nil, closeAfter(&store.RepositoryError{Op: "open", Err: err}, db)
	}
	r := &Repository{
		db:          db,
		path:        path,
		writer:      make(chan struct{}, 1),
		fences:      keyfile.NewLocks(p.FS, p.GetClock(), fencesDir, keyfile.FenceSuffix, "fence"),
		wakes:       keyfile.NewWakes(p.FS, fencesDir),
		selectLease: selectLease,
		prepared:    map[string]*sql.Stmt{},
	}
	r.close = sync.OnceValue(r.closeDB)
	return r, nil
}

// checkPath checks that p can open a database at path, and that path is
// one SQLite may open by name, and returns p (a nil p made sqlite.OS())
// and the path with its directory's links resolved.
func checkPath(p *platform.Platform, path string) (*platform.Platform, string, error) {
	if p == nil {
		p = platformsqlite.OS()
	}
	switch {
	case p.SQLite == nil:
		return nil, "", &store.RepositoryError{Op: "open", Err: fmt.Errorf("%s: the platform has no SQLite: %w", path, errors.ErrUnsupported)}
	case p.FS == nil:
		return nil, "", &store.RepositoryError{Op: "open", Err: fmt.Errorf("%s: the platform has no file system", path)}
	}
	// SQLite opens the WAL and shared-memory files by name: only in a
	// directory where nobody else can plant them, checked with the
	// database before the open, on the path with its directory's links
	// resolved, so that no link is followed after the check.
	resolved, err := platform.ResolveDir(p.FS, path)
	if err != nil {
		return nil, "", &store.RepositoryError{Op: "open", Err: fmt.Errorf("%s: %w", path, err)}
	}
	path = resolved
	if err := platform.SQLiteDir(p.FS, filepath.Dir(path), "use the file store (dir:DIR, lease/file)"); err != nil {
		return nil, "", &store.RepositoryError{Op: "open", Err: err}
	}
	// A link planted at the path would have SQLite write into its target.
	if st, err := p.FS.Lstat(path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return nil, "", &store.RepositoryError{Op: "open", Err: &fs.PathError{Op: "open", Path: path, Err: platform.ErrSymlink}}
	} else if err == nil && st.IsDir() {
		return nil, "", &store.RepositoryError{Op: "open", Err: &fs.PathError{Op: "open", Path: path, Err: errIsDir}}
	}
	if err := platform.SQLiteFiles(p.FS, path); err != nil {
		return nil, "", &store.RepositoryError{Op: "open", Err: err}
	}
	return p, path, nil
}

// OpenReadOnly opens the existing lease database at path on p for
// reading: it creates, migrates and changes nothing, neither the
// database nor the fence directory beside it, so that a look at a
// mistyped path, or at a file that is not a lease database, leaves it as
// it was. It reads a database of version 2, which it cannot migrate, as
// holding no values. A missing file, or one without this package's
// schema, is a *store.RepositoryError. Save and Fence on it fail.
func OpenReadOnly(p *platform.Platform, path string) (*Repository, error) {
	p, path, err := checkPath(p, path)
	if err != nil {
		return nil, err
	}
	if _, err := p.FS.Lstat(path); err != nil {
		return nil, &store.RepositoryError{Op: "open", Err: err}
	}
	db, err := p.SQLite.Open(path, platform.SQLiteOptions{ReadOnly: true, BusyTimeout: busyTimeout})
	if err != nil {
		return nil, &store.RepositoryError{Op: "open", Err: err}
	}
	var version int64
	if err := db.QueryRow(selectSchemaVersion).Scan(&version); err != nil {
		return nil, closeAfter(&store.RepositoryError{Op: "open", Err: fmt.Errorf("%s is not a lease database: %w", path, err)}, db)
	}
	sel := selectLease
	switch version {
	case schemaVersion:
	case versionWithoutValue:
		sel = selectLeaseV2
	default:
		return nil, closeAfter(&store.RepositoryError{Op: "open", Err: &SchemaError{Path: path, Version: version, Supported: schemaVersion}}, db)
	}
	r := &Repository{
		db:          db,
		path:        path,
		writer:      make(chan struct{}, 1),
		fences:      keyfile.NewLocks(p.FS, p.GetClock(), path+".fences", keyfile.FenceSuffix, "fence"),
		selectLease: sel,
		prepared:    map[string]*sql.Stmt{},
	}
	r.close = sync.OnceValue(r.closeDB)
	return r, nil
}

// closeAfter closes db after a failed open, and returns err, joined with
// the close's error if there is one.
func closeAfter(err error, db *sql.DB) error {
	if cerr := db.Close(); cerr != nil {
		return errors.Join(err, cerr)
	}
	return err
}

// setupSchema creates the tables if missing, checks the version and
// migrates an older one, in one transaction, so that processes opening a
// new database at once create it once, and an old one migrate it once.
func setupSchema(db *sql.DB, path string) error {
	fail := func(err error) error { return &store.RepositoryError{Op: "open", Err: fmt.Errorf("%s: %w", path, err)} }
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
	if version < oldestVersion || version > schemaVersion {
		return &store.RepositoryError{Op: "open", Err: &SchemaError{Path: path, Version: version, Supported: schemaVersion}}
	}
	if _, err := tx.Exec(createLeasesTable); err != nil {
		return fail(err)
	}
	if version < schemaVersion {
		if err := migrate(tx); err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

// migrate brings a database of an older version to schemaVersion: it
// adds each of addedColumns that the leases table lacks, with its
// default in every row, and sets the version.
func migrate(tx *sql.Tx) error {
	for _, c := range addedColumns {
		var n int
		if err := tx.QueryRow(hasColumn, c.name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		if _, err := tx.Exec(addColumn + c.name + " " + c.definition); err != nil {
			return err
		}
	}
	_, err := tx.Exec(setVersion)
	return err
}

// Close closes the database. It is idempotent. Fences taken before stay
// held until their unlock.
func (r *Repository) Close() error { return r.close() }

// closeDB closes the prepared statements, then the database.
func (r *Repository) closeDB() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, st := range r.prepared {
		errs = append(errs, st.Close())
	}
	clear(r.prepared)
	return errors.Join(append(errs, r.db.Close())...)
}

// prepare returns query prepared on the database, preparing it on first
// use. A transaction runs it through Tx.StmtContext, which reuses what its
// connection prepared before.
func (r *Repository) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.prepared[query]; ok {
		return st, nil
	}
	st, err := r.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	r.prepared[query] = st
	return st, nil
}

// Load reads key's row.
func (r *Repository) Load(ctx context.Context, key string) (store.Record, bool, error) {
	if err := check.Call(ctx, key); err != nil {
		return store.Record{}, false, err
	}
	var cols [8]any
	err := r.db.QueryRowContext(ctx, r.selectLease, key).Scan(&cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5], &cols[6], &cols[7])
	if errors.Is(err, sql.ErrNoRows) {
		return store.Record{}, false, nil
	}
	if err != nil {
		return store.Record{}, false, r.fail(ctx, "load", key, err)
	}
	rec, err := decodeRow(cols)
	if err != nil {
		return store.Record{}, false, r.corrupt("load", key, err)
	}
	return rec, true, nil
}

// corrupt returns the error of op on key's row, which decodeRow refused
// with err.
func (r *Repository) corrupt(op, key string, err error) error {
	where := fmt.Sprintf("%s, table leases", r.path)
	return &store.RepositoryError{Op: op, Key: key, Err: &store.CorruptRecordError{Key: key, Where: where, Err: err}}
}

// Save compares and writes in one BEGIN IMMEDIATE transaction.
func (r *Repository) Save(ctx context.Context, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	if err := check.Save(ctx, key, s); err != nil {
		return 0, err
	}
	var rev store.Revision
	err := r.inTx(ctx, "save", key, func(tx *sql.Tx) error {
		var err error
		stmts := &txStatements{r: r, tx: tx}
		defer stmts.close()
		rev, err = r.saveTx(ctx, stmts, key, s, expected)
		return err
	})
	if err == nil && s.Released {
		r.wakes.Freed(key)
	}
	return rev, err
}

// SaveBatch applies writes in one BEGIN IMMEDIATE transaction. A
// conflict, an invalid key or a corrupt row fails its write only; a
// storage failure rolls back the batch and fails every write.
func (r *Repository) SaveBatch(ctx context.Context, writes []store.Write) ([]store.Revision, []error) {
	revs, errs := make([]store.Revision, len(writes)), make([]error, len(writes))
	if ctx.Err() != nil {
		check.Fill(errs, context.Cause(ctx))
		return revs, errs
	}
	err := r.inTx(ctx, "save batch", "", func(tx *sql.Tx) error {
		stmts := &txStatements{r: r, tx: tx}
		defer stmts.close()
		for i, w := range writes {
			if errs[i] = w.Validate(); errs[i] != nil {
				continue
			}
			revs[i], errs[i] = r.saveTx(ctx, stmts, w.Key, w.Snapshot, w.Expected)
			if keyOnly(errs[i]) {
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
		check.Fill(errs, err)
	}
	for i, w := range writes {
		if errs[i] == nil && w.Snapshot.Released {
			r.wakes.Freed(w.Key)
		}
	}
	return revs, errs
}

// WatchFreed wakes freed after each tombstone of key saved by any
// process of this host, through key's wake file in the fences'
// directory (on Linux; elsewhere, and on a repository opened read-only,
// which creates nothing, it fails, and waiters poll).
func (r *Repository) WatchFreed(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return r.wakes.WatchFreed(ctx, key)
}

var _ store.Watcher = (*Repository)(nil)

// saveTx compares and writes one record inside stmts' transaction. It
// never writes over a row that Load would refuse: that is a
// *store.RepositoryError wrapping a *store.CorruptRecordError, as Load returns it.
// Otherwise it returns a *store.RevisionConflictError, or the raw storage error
// for inTx to wrap.
//
// A renewal is one statement: updateChecked compares the revision and
// checks the row in the database. When it writes nothing (a conflict, a
// takeover from another holder, a corrupt row), saveTx reads and decodes
// the row, and writes over it if it is valid and of the revision
// expected.
func (r *Repository) saveTx(ctx context.Context, stmts *txStatements, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	next := int64(expected) + 1
	args := saveArgs(key, s, expected)
	query := updateChecked
	if expected == 0 {
		query = insertLease
	}
	switch n, err := stmts.exec(ctx, query, args...); {
	case err != nil:
		return 0, err
	case n == 1:
		return store.Revision(next), nil
	}
	cur, err := r.storedRevision(ctx, stmts, key)
	switch {
	case err != nil:
		return 0, err
	case store.Revision(cur) != expected:
		return 0, &store.RevisionConflictError{Key: key, Expected: expected, Actual: store.Revision(cur)}
	}
	// A valid row that updateChecked does not recognise.
	if _, err := stmts.exec(ctx, updateLease, args...); err != nil {
		return 0, err
	}
	return store.Revision(next), nil
}

// saveArgs returns the arguments of the statements of a save of s over
// revision expected of key, numbered as the statements number them.
func saveArgs(key string, s store.Snapshot, expected store.Revision) []any {
	holder := string(s.Holder.Marshal())
	_, err := parseHolder(holder)
	// A generation above the int64 range is stored as its two's
	// complement bits, which read back as the same Token.
	return []any{int64(expected) + 1, int64(s.Generation), holder, s.Released, s.RenewedAt.Format(time.RFC3339Nano), int64(s.TTL),
		key, int64(expected), err == nil, s.Broken, s.Value}
}

// storedRevision reads and decodes key's row, and returns its revision
// (0: no row).
func (r *Repository) storedRevision(ctx context.Context, stmts *txStatements, key string) (int64, error) {
	sel, err := stmts.get(ctx, r.selectLease)
	if err != nil {
		return 0, err
	}
	var cols [8]any
	err = sel.QueryRowContext(ctx, key).Scan(&cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5], &cols[6], &cols[7])
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, err
	}
	rec, err := decodeRow(cols)
	if err != nil {
		return 0, r.corrupt("save", key, err)
	}
	return int64(rec.Revision), nil
}

// txStatements holds the statements of a save in one transaction, each
// taken on first use from the repository's prepared ones: a batch of
// thousands of renewals runs one statement, prepared once per database
// connection rather than once per write or per transaction.
type txStatements struct {
	r     *Repository
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func (t *txStatements) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := t.stmts[query]; ok {
		return st, nil
	}
	parent, err := t.r.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	st := t.tx.StmtContext(ctx, parent)
	if t.stmts == nil {
		t.stmts = map[string]*sql.Stmt{}
	}
	t.stmts[query] = st
	return st, nil
}

// exec runs query with args and returns how many rows it changed.
func (t *txStatements) exec(ctx context.Context, query string, args ...any) (int64, error) {
	st, err := t.get(ctx, query)
	if err != nil {
		return 0, err
	}
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// close closes the transaction's statements; its end would too. The
// repository's stay prepared.
func (t *txStatements) close() {
	for _, st := range t.stmts {
		st.Close()
	}
}

// inTx runs fn in a BEGIN IMMEDIATE transaction, one at a time per
// handle: writers of this process queue here, woken at once, rather than
// in SQLite's busy handler, which sleeps. An error of one key from fn (a
// conflict or a corrupt row, see keyOnly) is returned as it is, after the
// transaction commits (it has written nothing, and a batch keeps its
// other writes).
// maxIdleConns is how many connections a handle keeps open while idle:
// its writer and the readers that run beside it.
const maxIdleConns = 8

func (r *Repository) inTx(ctx context.Context, op, key string, fn func(*sql.Tx) error) error {
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
	if ferr != nil && !keyOnly(ferr) {
		return r.fail(ctx, op, key, ferr)
	}
	if err := tx.Commit(); err != nil {
		return r.fail(ctx, op, key, err)
	}
	return ferr
}

// keyOnly reports whether err, from saveTx, fails its own write only: a
// revision conflict, or a corrupt row that was left as it was.
func keyOnly(err error) bool {
	return errors.Is(err, store.ErrRevisionConflict) || errors.Is(err, store.ErrCorruptRecord)
}

// fail returns the cause of ctx if it ended (database/sql reports an
// interrupted statement as its own error), else a *store.RepositoryError.
func (r *Repository) fail(ctx context.Context, op, key string, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return &store.RepositoryError{Op: op, Key: key, Err: err}
}

// Fence holds key's fence file (under the database's path plus
// ".fences") until unlock.
func (r *Repository) Fence(ctx context.Context, key string) (func(), error) {
	return r.fences.Lock(ctx, key)
}

// Keys returns every key with a row, sorted.
func (r *Repository) Keys(ctx context.Context) ([]string, error) {
	rows, err := r.db.QueryContext(ctx, "SELECT key FROM leases ORDER BY key")
	if err != nil {
		return nil, r.fail(ctx, "list", "", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, r.fail(ctx, "list", "", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, r.fail(ctx, "list", "", err)
	}
	return keys, nil
}

// decodeRow converts a leases row read into driver values (the columns
// of selectLease), reporting any value that a valid record cannot hold
// (store.Snapshot.Validate included).
func decodeRow(cols [8]any) (store.Record, error) {
	rev, ok := cols[0].(int64)
	if !ok || rev <= 0 {
		return store.Record{}, fmt.Errorf("revision %v is not a positive integer", cols[0])
	}
	gen, ok := cols[1].(int64)
	if !ok {
		return store.Record{}, fmt.Errorf("generation %v is not an integer", cols[1])
	}
	var s store.Snapshot
	s.Generation = store.Token(gen)
	holder, ok := textOf(cols[2])
	if !ok {
		return store.Record{}, fmt.Errorf("holder %v is not text", cols[2])
	}
	id, err := parseHolder(holder)
	if err != nil {
		return store.Record{}, &store.SnapshotFieldError{Field: "holder", Err: err}
	}
	s.Holder = id
	released, ok := cols[3].(int64)
	if !ok || released != 0 && released != 1 {
		return store.Record{}, fmt.Errorf("released %v is not 0 or 1", cols[3])
	}
	s.Released = released == 1
	renewed, ok := textOf(cols[4])
	if !ok {
		return store.Record{}, fmt.Errorf("renewed_at %v is not text", cols[4])
	}
	t, err := time.Parse(time.RFC3339Nano, renewed)
	if err != nil {
		return store.Record{}, fmt.Errorf("renewed_at: %w", err)
	}
	s.RenewedAt = t
	ttl, ok := cols[5].(int64)
	if !ok {
		return store.Record{}, fmt.Errorf("ttl_ns %v is not an integer", cols[5])
	}
	s.TTL = time.Duration(ttl)
	broken, ok := cols[6].(int64)
	if !ok || broken != 0 && broken != 1 {
		return store.Record{}, fmt.Errorf("broken %v is not 0 or 1", cols[6])
	}
	// A writer of schema version 1 that opened the database before its
	// migration sets released without broken: a row it acquired over a
	// broken tombstone keeps broken = 1. Broken means nothing in a held row.
	s.Broken = broken == 1 && s.Released
	// The driver gives TEXT as a string and a BLOB as bytes, which are
	// not a value even if they would be valid text; Validate judges the
	// text.
	value, ok := cols[7].(string)
	if !ok {
		return store.Record{}, &store.SnapshotFieldError{Field: "value", Err: fmt.Errorf("%s, not text", sqlType(cols[7]))}
	}
	s.Value = value
	if err := s.Validate(); err != nil {
		return store.Record{}, err
	}
	return store.Record{Snapshot: s, Revision: store.Revision(rev)}, nil
}

// lastHolder is the holder text that parseHolder parsed last, and its
// identity.
var lastHolder atomic.Pointer[parsedHolder]

type parsedHolder struct {
	text string
	id   platform.Identity
}

// parseHolder is platform.ParseIdentity of a holder column, remembering
// the last text it accepted: a database's rows mostly hold a few
// holders, and a heartbeat reads thousands of rows of one, which parse
// once.
func parseHolder(text string) (platform.Identity, error) {
	if p := lastHolder.Load(); p != nil && p.text == text {
		return p.id, nil
	}
	id, err := platform.ParseIdentity([]byte(text))
	if err != nil {
		return platform.Identity{}, err
	}
	lastHolder.Store(&parsedHolder{text: text, id: id})
	return id, nil
}

// sqlType names the SQLite type of a value the driver read that is not
// TEXT, without the value, which may be long.
func sqlType(v any) string {
	switch v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return "BLOB"
	case int64:
		return "INTEGER"
	case float64:
		return "REAL"
	}
	return fmt.Sprintf("%T", v)
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
