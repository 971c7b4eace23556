package plock

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/rivus/collab/platform"
)

// sqliteBackend is the lock on a platform with SQLite: a database held
// with locking_mode=EXCLUSIVE on one pinned connection. The kernel drops
// its POSIX locks when the holder dies, so nothing is ever reclaimed.
type sqliteBackend struct {
	p    *platform.Platform
	path string
}

// The statements of an attempt. BEGIN EXCLUSIVE takes the exclusive lock
// at once (rollback journal); the write makes it stick after COMMIT, as
// locking_mode=EXCLUSIVE keeps a lock once it has written.
var takeStatements = []string{
	"BEGIN EXCLUSIVE",
	"CREATE TABLE IF NOT EXISTS collab_lock (id INTEGER PRIMARY KEY CHECK (id = 1), acquisitions INTEGER NOT NULL)",
	"INSERT INTO collab_lock (id, acquisitions) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET acquisitions = acquisitions + 1",
	"COMMIT",
}

// sqliteHeld is a taken SQLite lock.
type sqliteHeld struct {
	db     *sql.DB
	conn   *sql.Conn
	holder string // the .holder file this process wrote, or ""
	fsys   platform.FS
}

// attempt makes one attempt at the lock, waiting at most busy for a
// connection that holds it briefly (IsHeld's shared lock). It returns a
// *busyError, with the holder's stamp if readable, when another connection
// holds it. self may be nil: the SQLite lock needs no identity.
func (b *sqliteBackend) attempt(ctx context.Context, self *platform.Identity, busy time.Duration) (held, error) {
	// The lock database is private (0600): a user who could read it could
	// hold a read transaction open and keep every holder out. Created
	// here, before SQLite opens it, with that mode; its journal takes the
	// same. Other users learn who holds the lock from the .holder stamp.
	if err := b.p.FS.CreateExclusive(b.path, nil, 0o600); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("plock: create SQLite lock %s: %w", b.path, err)
	}
	db, err := b.p.SQLite.Open(b.path, platform.SQLiteOptions{ExclusiveLocking: true, BusyTimeout: busy})
	if err != nil {
		return nil, err
	}
	// The pool must never close the connection that holds the lock, nor
	// open a second one on the file.
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	for _, stmt := range takeStatements {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			cerr := errors.Join(conn.Close(), db.Close())
			if code := platform.SQLiteCode(err); code == platform.SQLiteBusy || code == platform.SQLiteLocked {
				return nil, &busyError{readHolder(b.p.FS, b.path+holderSuffix)}
			}
			return nil, errors.Join(fmt.Errorf("plock: take SQLite lock %s: %w", b.path, err), cerr)
		}
	}
	h := &sqliteHeld{db: db, conn: conn, fsys: b.p.FS}
	if err := h.stamp(b.path+holderSuffix, self); err != nil {
		return nil, errors.Join(err, h.release())
	}
	return h, nil
}

// needsIdentity: the kernel judges SQLite's holders; the stamp is only
// for diagnostics.
func (b *sqliteBackend) needsIdentity() bool { return false }

// stamp writes the holder's identity beside the lock, for diagnostics; a
// holder that cannot read its own identity removes a stale stamp instead.
func (h *sqliteHeld) stamp(name string, self *platform.Identity) error {
	err := removeIfExists(h.fsys, name)
	if errors.Is(err, fs.ErrPermission) {
		// Another user's stamp in a sticky directory (/tmp): it cannot
		// be replaced, and the stamp is only for diagnostics, so the lock
		// is kept without one. Readers may meet that user's stale stamp,
		// which names a process that does not hold the lock.
		return nil
	}
	if self == nil {
		if err != nil {
			return fmt.Errorf("plock: remove stale holder stamp %s: %w", name, err)
		}
		return nil
	}
	// Diagnostics need no durability: replace the stamp without syncing.
	// The lock keeps other writers out; a reader may briefly find none.
	if err == nil {
		err = h.fsys.CreateExclusive(name, self.Marshal(), 0o644)
	}
	if err != nil {
		return fmt.Errorf("plock: write holder stamp %s: %w", name, err)
	}
	h.holder = name
	return nil
}

// release removes the stamp while the lock still keeps others out, then
// closes the connection, which drops the lock.
func (h *sqliteHeld) release() error {
	var err error
	if h.holder != "" {
		err = removeIfExists(h.fsys, h.holder)
	}
	return errors.Join(err, h.conn.Close(), h.db.Close())
}

// isHeld makes one attempt at a shared lock, with no busy timeout and no
// retries, reading and writing nothing else: a missing file stays missing.
func (b *sqliteBackend) isHeld(ctx context.Context) (bool, *platform.Identity, error) {
	db, err := b.p.SQLite.Open(b.path, platform.SQLiteOptions{ReadOnly: true})
	if err != nil {
		return false, nil, err
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n)
	switch code := platform.SQLiteCode(err); {
	case err == nil, code == platform.SQLiteCantOpen:
		return false, nil, nil
	case code == platform.SQLiteBusy || code == platform.SQLiteLocked:
		return true, nil, nil
	}
	return false, nil, fmt.Errorf("plock: check SQLite lock %s: %w", b.path, err)
}
