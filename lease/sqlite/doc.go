// Package sqlite keeps lease records in a SQLite database that the
// processes opening the file share: the store.Repository collab uses by
// default. It lives apart from package lease so that a program that
// leases through another repository links no SQLite. A nil platform is
// sqlite.OS() of platform/sqlite, with modernc.org/sqlite.
//
// The database lives only in a directory that its owner (this user or
// root) alone can write: SQLite opens its -wal and -shm by name and
// follows links, so a -wal another user planted would be replayed into it
// and a planted -shm would hold its write lock. Anywhere else Open fails
// with a *platform.SharedDirError that names the directory and the file
// store (package lease/file), and the database and its companions must be
// this user's single-link regular files, the database private
// (*platform.SQLiteFileError).
//
// [Open] opens the database through the platform's SQLite with
// journal_mode=WAL (readers never wait for the writer),
// busy_timeout=10s, and _txlock=immediate, so every write transaction is
// BEGIN IMMEDIATE: it takes the database's write lock before it compares
// the revision, and two processes cannot both pass the compare. A write
// over a revision is one UPDATE whose condition compares the revision and
// checks the stored row (a renewal's: its own holder, valid values, the
// value it publishes unchanged); when it writes nothing, the transaction
// reads and decodes the row, so that a conflict, a corrupt row and a
// valid row of another holder are told apart, and only the last is
// written over.
// Writers of one handle queue in the process before they begin, so that
// SQLite's sleeping busy handler only arbitrates between processes. The
// schema, set up idempotently in one transaction on open:
//
//	CREATE TABLE IF NOT EXISTS lease_schema (
//		id      INTEGER PRIMARY KEY CHECK (id = 1),
//		version INTEGER NOT NULL                     -- 3
//	) STRICT;
//	CREATE TABLE IF NOT EXISTS leases (
//		key        TEXT    PRIMARY KEY NOT NULL,
//		revision   INTEGER NOT NULL CHECK (revision > 0),
//		generation INTEGER NOT NULL,                 -- the Token's bits
//		holder     TEXT    NOT NULL,                 -- platform.Identity JSON
//		released   INTEGER NOT NULL CHECK (released IN (0, 1)),
//		renewed_at TEXT    NOT NULL,                 -- RFC 3339, nanoseconds
//		ttl_ns     INTEGER NOT NULL,
//		broken     INTEGER NOT NULL DEFAULT 0 CHECK (broken IN (0, 1)),
//		value      TEXT    NOT NULL DEFAULT ''       -- Snapshot.Value, "" for none
//	) STRICT, WITHOUT ROWID;
//
// The version lives in its own table rather than PRAGMA user_version, so
// the tables can share a database with an application's. A database of
// another version fails to open with a *[SchemaError] (wrapped in a
// *store.RepositoryError) and is not changed, except versions 1, which had
// no broken column, and 2, which had no value column: [Open] brings them
// to version 3, adding the columns missing (ALTER TABLE, in the set-up's
// transaction), and collab of their days then refuses to open the
// database. [OpenReadOnly], which changes nothing, reads version 2 as
// having no values, and refuses version 1.
//
// A writer of an older version that opened the database before the
// migration writes on as its version did: it sets no value, and keeps
// the value of a row it writes over, so that a value read from a held
// row of such a mixed-version period may be its predecessor's. Every
// version of this package writes the value it publishes on every save.
//
// It implements store.BatchSaver, a batch being one transaction, and
// store.Lister.
//
// The fences are lock files in the directory named by the database path
// plus ".fences" (leases.db.fences/), one per key, named and waited for as
// lease/file names and waits for its own, with the suffix ".fence". They
// are not SQLite locks, so that a fenced piece of work, however long,
// never holds the database's write lock.
//
// A release's or a break's tombstone wakes the key's waiters
// (store.Watcher, lease.Manager.AcquireWait) in every process of the
// host: its writer notifies the key's wake file beside its fence (the
// suffix ".wake") once the transaction has committed, and each waiter
// watches it (platform.Notifier: inotify on Linux; elsewhere waiters
// poll). A repository opened read-only watches nothing.
package sqlite
