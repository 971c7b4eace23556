// Package store is the port between a lease manager and the storage of
// its records, for those who write a repository, in the manner of
// database/sql/driver: package lease drives any [Repository], and
// lease.MemoryRepository and the packages lease/sqlite, lease/file and
// lease/postgres implement one. Users of leases need it only to name
// these types; the manager's API lives in package lease.
//
// # The contract
//
// A [Repository] stores one [Record] per key: a [Snapshot] and the
// [Revision] it was stored under. Revisions count the saves of a key,
// from 1; 0 means no record. Save writes only over the revision the
// caller expects and otherwise fails with a *[RevisionConflictError]; of
// two writers who read the same revision exactly one succeeds. This
// compare-and-swap is all the lease logic needs from storage. Records are
// never deleted: a released lease stays as a tombstone, so that the next
// generation is still larger than every earlier one.
//
// Every method first checks the key, then the context. An invalid key
// ([ValidateKey]: empty, more than [MaxKeyLen] bytes, a NUL byte, or
// invalid UTF-8; '/', ".." and any other character are fine) is a
// *[KeyError]. A context that has ended returns context.Cause(ctx)
// itself, unwrapped, and changes nothing. Save checks the snapshot too
// ([Write.Validate]), and never writes one that a read would refuse.
// Storage failures are *[RepositoryError]. A stored record that cannot be
// decoded, or that holds a value no lease record can ([Snapshot.Validate]),
// is a *RepositoryError wrapping a *[CorruptRecordError] that names where
// it is stored and the field: it fails its key only, every later Load and
// Save of that key fails the same way (a save never writes over it,
// whatever revision it expects), and the record is left as it is for a
// person to inspect.
//
// A fence (Repository.Fence) is a per-key mutex independent of the
// records: holding it does not block Load or Save, so that a holder's
// heartbeat goes on while its fenced work runs. A wait that its context
// ends holds nothing; unlock is idempotent.
//
// Three interfaces are optional: a [BatchSaver] applies the renewals of a
// heartbeat in one transaction, a [FenceWatcher] tells when it loses a
// fence it holds, and a [Lister] lists its keys. Package lease/leasetest
// checks the contract, batches included, for any repository.
//
// # Errors
//
// Each kind of failure is matched one way. errors.Is with a sentinel
// asks for the kind: [ErrRevisionConflict], [ErrCorruptRecord] and
// [ErrInvalidKey], which *RevisionConflictError, *CorruptRecordError and
// *KeyError match; these types carry the details for messages.
// *RepositoryError and *SnapshotFieldError have no sentinel: errors.As
// finds them, for the operation or the field they name.
package store
