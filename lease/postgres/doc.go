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
//		version integer NOT NULL                     -- 2
//	);
//	CREATE TABLE IF NOT EXISTS collab_leases (
//		key        text    PRIMARY KEY,
//		revision   bigint  NOT NULL CHECK (revision > 0),
//		generation bigint  NOT NULL,                 -- the Token's bits
//		holder     text    NOT NULL,                 -- platform.Identity JSON
//		released   boolean NOT NULL,
//		renewed_at text    NOT NULL,                 -- RFC 3339, nanoseconds
//		ttl_ns     bigint  NOT NULL,
//		broken     boolean NOT NULL DEFAULT false
//	);
//
// renewed_at is text rather than timestamptz, which keeps microseconds
// only: a record reads back exactly as it was written, zone included. A
// database of another schema version fails to open with a
// *[SchemaError] wrapped in a *store.RepositoryError, and is not
// changed, except version 1, which had no broken column: it is added on
// open, and the tables are then version 2. [WithSchema] puts the tables in a PostgreSQL schema of their
// own.
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
// time.RFC3339Nano writes, a positive TTL, a generation other than 0. No
// row written means a conflict, a corrupt row, or a valid row in another
// form; a second statement reads the row and tells them apart: a
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
// # Hosts
//
// The manager cannot probe processes of another host (another boot id):
// it judges their leases by the TTL alone, counted on its own monotonic
// clock from when it first saw the holder's current record. Hosts need
// no synchronised clocks.
package postgres
