package store

import (
	"errors"
	"fmt"

	"github.com/rivus/collab/lease/internal/quote"
)

// Sentinels that the typed errors of this package match with errors.Is:
// the one way to ask for a kind of failure. The types carry its details
// for messages.
var (
	// ErrRevisionConflict is matched by every *RevisionConflictError.
	ErrRevisionConflict = errors.New("lease: revision conflict")
	// ErrCorruptRecord is matched by every *CorruptRecordError.
	ErrCorruptRecord = errors.New("lease: corrupt record")
	// ErrInvalidKey is matched by every *KeyError.
	ErrInvalidKey = errors.New("lease: invalid key")
)

// RevisionConflictError reports a save whose expected revision was not
// the stored one: another writer moved the record first. Nothing was
// written.
type RevisionConflictError struct {
	Key      string
	Expected Revision // the revision the writer expected (0: no record)
	Actual   Revision // the stored revision (0: no record)
}

func (e *RevisionConflictError) Error() string {
	return fmt.Sprintf("lease: revision conflict on key %s: expected revision %d, found %d", quote.Key(e.Key), e.Expected, e.Actual)
}

// Is makes errors.Is(err, ErrRevisionConflict) true.
func (e *RevisionConflictError) Is(target error) bool { return target == ErrRevisionConflict }

// RepositoryError reports a storage failure: I/O, SQLite, or a record
// that cannot be read (then Err is a *CorruptRecordError).
type RepositoryError struct {
	Op  string // "open", "load", "save", "fence", ...
	Key string // "" for failures of the whole repository
	Err error
}

func (e *RepositoryError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("lease: repository %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("lease: repository %s of key %s: %v", e.Op, quote.Key(e.Key), e.Err)
}

func (e *RepositoryError) Unwrap() error { return e.Err }

// CorruptRecordError reports a stored record that cannot be decoded, or
// that holds a value no lease record can (see Snapshot.Validate; Err then
// wraps a *SnapshotFieldError). The record is left as it is for a person
// to inspect; only its key fails, in Load and in Save alike.
type CorruptRecordError struct {
	Key   string
	Where string // the file, or the database and table, holding the record
	Err   error  // what is wrong with it
}

func (e *CorruptRecordError) Error() string {
	return fmt.Sprintf("corrupt lease record for key %s in %s: %v", quote.Key(e.Key), e.Where, e.Err)
}

func (e *CorruptRecordError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrCorruptRecord) true.
func (e *CorruptRecordError) Is(target error) bool { return target == ErrCorruptRecord }

// SnapshotFieldError reports a field of a snapshot that no lease record
// can hold. A repository that reads one wraps it in a
// *CorruptRecordError.
type SnapshotFieldError struct {
	Field string // "generation", "holder", "broken", "ttl", "renewedAt" or "value"
	Err   error  // what is wrong with it
}

func (e *SnapshotFieldError) Error() string { return e.Field + ": " + e.Err.Error() }

func (e *SnapshotFieldError) Unwrap() error { return e.Err }

// KeyError reports a key that cannot name a lease (see ValidateKey).
type KeyError struct {
	Key    string
	Reason string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("lease: invalid key %s: %s", quote.Key(e.Key), e.Reason)
}

// Is makes errors.Is(err, ErrInvalidKey) true.
func (e *KeyError) Is(target error) bool { return target == ErrInvalidKey }
