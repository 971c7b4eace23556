// Package store is the port between a lease manager and the storage of
// its records, for those who write a repository, in the manner of
// database/sql/driver: package lease drives any [Repository], and
// lease.MemoryRepository and the packages lease/sqlite, lease/file and
// lease/postgres implement one. Users of leases need it only to name
// these types; the manager's API lives in package lease.
//
// [Repository] states the contract every repository keeps, which
// package lease/leasetest checks: run leasetest.Run in your repository's
// tests. Three interfaces are optional: a [BatchSaver] applies the
// renewals of a heartbeat in one transaction, a [FenceWatcher] tells when
// it loses a fence it holds, and a [Lister] lists its keys.
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
