// Package postgres keeps leases in a PostgreSQL database, so that
// holders on several hosts share them.
//
// [Open] connects with a pgxpool.Pool and sets up the schema
// idempotently, in one transaction under a transaction-level advisory
// lock (so that processes opening a new database at once do not race on
// CREATE TABLE):
//
//	CREATE TABLE IF NOT EXISTS collab_lease_schema (
//		id      integer PRIMARY KEY CHECK (id = 1),
//		version integer NOT NULL                     -- 3
//	);
//	CREATE TABLE IF NOT EXISTS collab_leases (
//		key        text    PRIMARY KEY,
//		revision   bigint  NOT NULL CHECK (revision > 0),
//		generation bigint  NOT NULL,                 -- the Token's bits
//		holder     text    NOT NULL,                 -- platform.Identity JSON
//		released   boolean NOT NULL,
//		renewed_at text    NOT NULL,                 -- RFC 3339, nanoseconds
//		ttl_ns     bigint  NOT NULL,
//		broken     boolean NOT NULL DEFAULT false,   -- since version 2
//		value      text    NOT NULL DEFAULT ''       -- since version 3
//	);
//
// renewed_at is text rather than timestamptz, which keeps microseconds
// only: a record reads back exactly as it was written, zone included.
// value is the holder's published value (store.Snapshot.Value), "" for
// none; store.Snapshot.Validate refuses, before any write, what text
// could not hold or the database's encoding could reject (NUL, bytes
// that are not UTF-8), and, on every read, a stored value that no record
// holds (longer than store.MaxValueLen bytes, or not UTF-8 in a database
// of encoding SQL_ASCII), which is then a *store.CorruptRecordError.
// [WithSchema] puts the tables in a PostgreSQL schema of their own.
//
// # Versions
//
// Open brings tables of an older version to version 3, in the same
// transaction under the same lock, adding the columns they lack with
// the default that their rows mean: version 1 had no broken column (its
// rows are unbroken), version 2 no value column (its rows have no
// value). A database of another version fails to open with a
// *[SchemaError] wrapped in a *store.RepositoryError, and is not
// changed. A [ReadOnly] Open migrates nothing: it reads tables of
// version 3, and of version 2 as records without a value.
//
// A writer of an older version that opened the tables before the
// migration goes on writing only the columns it knows, and a row it
// writes over keeps the others. A version 1 writer that acquires over a
// broken tombstone leaves broken set, which means nothing in a held row
// (it reads as unbroken). A version 2 writer keeps the value of the row
// it writes over: while writers of versions 2 and 3 share the tables, the
// value read from a held row (or a tombstone) may be its predecessor's,
// not its holder's, until a writer of version 3 writes the row again.
// Upgrade every writer before relying on values.
//
// # Writes
//
// Save is one conditional statement: INSERT ... ON CONFLICT DO NOTHING
// for a new record, UPDATE ... WHERE key = $1 AND revision = $2 AND (the
// stored row is valid) for others. PostgreSQL's row locks make two
// writers of one revision serialise, and the second finds the revision
// moved, so exactly one succeeds. The validity check accepts only rows
// that Load accepts: the holder written (a renewal's) or one in the form
// platform.Identity.Marshal writes, a renewed_at in the form
// time.RFC3339Nano writes, a positive TTL, a generation other than 0, the
// value written (a renewal's) or one of ASCII within store.MaxValueLen
// bytes. No row written means a conflict, a corrupt row, or a valid row
// in another form (a value of other characters that changes, say); a
// second statement reads the row and tells them apart: a
// conflict is a *store.RevisionConflictError, a corrupt row its
// *store.CorruptRecordError (the row is never written over), and a valid
// row is written over in a transaction that locks and decodes it first.
// SaveBatch runs the statements of all its writes in one transaction,
// sent in one pipeline (with its begin and commit, three round trips for
// the manager's heartbeat of any number of leases); a write over a valid
// row in another form is settled in the same transaction, so that a
// storage failure applies none of the batch.
//
// # Fences
//
// A fence is a session-level advisory lock, pg_try_advisory_lock of a
// 64-bit FNV-1a hash of the table's qualified name and the key, held on a
// connection of a second pool that only fences use (so that fenced work,
// however long and however many, never takes the connections that
// heartbeats need). The connection stays with the fence until unlock. If
// the connection or its process dies, the server ends the session and
// drops the lock. A waiter polls, on the platform's clock, with a wait of
// 1 ms doubling to 100 ms with jitter, until the lock is free or its
// context ends; waiters of one repository queue in the process first, so
// only one of them polls. Two keys whose hashes collide share a fence,
// which costs waiting, never safety.
//
// # Waking waiters
//
// A release's or a break's tombstone wakes the key's waiters
// (store.Watcher, lease.Manager.AcquireWait) on every host: once the
// save has committed, its writer sends NOTIFY on the table's channel
// (collab_leases_ and a hash of the table's name) with the key, and a
// repository that watches LISTENs on one connection of its own while
// anything is watched, and for 30 seconds after, so that a waiter that
// waits again, or a leader's successor, finds it open. A notification lost (the writer died between its
// save and its notification, or the listening connection broke) leaves
// its waiters to their polling. LISTEN needs no privilege, so a role
// that may only SELECT can wait too.
//
// # Hosts
//
// The manager cannot probe processes of another host (another boot id):
// it judges their leases by the TTL alone, counted on its own monotonic
// clock from when it first saw the holder's current record. Hosts need
// no synchronised clocks.
package postgres
