package store

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Token is a fencing token: the generation of a lease. It grows on every
// acquisition of a key and never goes back, so a resource that keeps the
// highest token it has seen can refuse an old holder's writes.
type Token uint64

// Revision identifies one stored version of a key's record. Every save
// changes it; 0 means "no record".
type Revision uint64

// Record is a stored snapshot and the revision it was stored under.
type Record struct {
	Snapshot Snapshot
	Revision Revision
}

// Repository stores one lease record per key, a Snapshot and the
// Revision it was stored under, and is safe for concurrent use. Its
// contract, which lease/leasetest checks:
//
// Revisions count the saves of a key, from 1; 0 means no record. Save
// writes only over the revision the caller expects and otherwise fails
// with a *RevisionConflictError, so that of two writers who read the same
// revision exactly one succeeds: this compare-and-swap is all the lease
// logic needs from storage. Records are never deleted: a released lease
// stays as a tombstone, so that the next generation is still larger than
// every earlier one.
//
// Every method first checks the key, then the context. An invalid key
// (see ValidateKey) is a *KeyError. A context that has ended returns
// context.Cause(ctx) itself, unwrapped, and changes nothing. Save checks
// the snapshot too (Write.Validate), and never writes one that a read
// would refuse. Storage failures are *RepositoryError. A stored record
// that cannot be decoded, or that holds a value no lease record can
// (Snapshot.Validate), is a *RepositoryError wrapping a
// *CorruptRecordError that names where it is stored and the field: it
// fails its key only, every later Load and Save of that key fails the
// same way (a save never writes over it, whatever revision it expects),
// and the record is left as it is for a person to inspect.
//
// A fence is a per-key mutex independent of the records: holding it does
// not block Load or Save, so that a holder's heartbeat goes on while its
// fenced work runs.
type Repository interface {
	// Load returns the stored record of key, or ok false when there is
	// none.
	Load(ctx context.Context, key string) (rec Record, ok bool, err error)
	// Save writes s over expected (0: only if no record exists) and returns
	// the new revision, or a *RevisionConflictError.
	Save(ctx context.Context, key string, s Snapshot, expected Revision) (Revision, error)
	// Fence blocks until this caller holds key's fence (exclusive across
	// goroutines and, for SQLite and file repositories, processes) or ctx
	// ends (then it returns context.Cause(ctx) and holds nothing). unlock
	// is idempotent.
	Fence(ctx context.Context, key string) (unlock func(), err error)
}

// BatchSaver is implemented by repositories that can apply several saves
// in one transaction, so that a manager renews all its leases with one
// write per tick.
type BatchSaver interface {
	// SaveBatch applies writes in order, as Save would one by one, and
	// returns one result per write: a conflict or invalid key fails that
	// write only. A storage failure fails every write of the batch, none
	// of which is then applied.
	SaveBatch(ctx context.Context, writes []Write) ([]Revision, []error)
}

// Write is one save of a batch.
type Write struct {
	Key      string
	Snapshot Snapshot
	Expected Revision
}

// Validate reports what makes w unfit to save: its key (a *KeyError) or
// its snapshot (a *SnapshotFieldError, see Snapshot.Validate). A
// repository checks each write with it before it touches storage, so
// that it never writes a record that a read would refuse.
func (w Write) Validate() error {
	if err := ValidateKey(w.Key); err != nil {
		return err
	}
	return w.Snapshot.Validate()
}

// MaxKeyLen is the longest key, in bytes.
const MaxKeyLen = 256

// ValidateKey reports whether key can name a lease: a non-empty valid
// UTF-8 string of at most MaxKeyLen bytes without NUL. Any other byte is
// allowed, '/' and ".." included. It returns a *KeyError; repositories
// use it to refuse the keys every repository refuses.
func ValidateKey(key string) error {
	reason := textFault(key, MaxKeyLen)
	if key == "" {
		reason = "empty"
	}
	if reason == "" {
		return nil
	}
	return &KeyError{Key: key, Reason: reason}
}

// textFault says why s is no text that every store keeps as it is (at
// most maxLen bytes of valid UTF-8 without NUL), or "".
func textFault(s string, maxLen int) string {
	switch {
	case len(s) > maxLen:
		return fmt.Sprintf("%d bytes, more than %d", len(s), maxLen)
	case strings.IndexByte(s, 0) >= 0:
		return "contains NUL"
	case !utf8.ValidString(s):
		return "not valid UTF-8"
	}
	return ""
}

// FenceWatcher is implemented by repositories whose fence can be lost
// while it is held, such as an advisory lock that lives as long as a
// database session. Lease.RunFenced uses it when present: the fenced
// work's context is cancelled with cause lease.ErrFenceLost when the
// fence is lost, so that a successor's fenced work never runs beside it.
type FenceWatcher interface {
	// FenceWatch is Fence, and also returns a channel that is closed if
	// the fence is lost before unlock.
	FenceWatch(ctx context.Context, key string) (unlock func(), lost <-chan struct{}, err error)
}

// Lister is implemented by repositories that can list their keys, for
// operators (`collab lease ls`). Every repository of this module
// implements it.
type Lister interface {
	// Keys returns every key with a record, sorted.
	Keys(ctx context.Context) ([]string, error)
}

// Watcher is implemented by repositories that can tell a waiter that a
// key's record may have been freed: a tombstone (a release, or an
// operator's break) saved by any handle on the same storage, in this
// process or, where the storage can tell, in others. lease.Manager's
// AcquireWait then tries again at once rather than at its next poll.
// A wake is a hint: the waiter reads and claims through the repository as
// ever, and polls as well, for the holders that stop without a tombstone
// (a dead or silent one).
type Watcher interface {
	// WatchFreed returns a channel that receives after each tombstone of
	// key saved after WatchFreed returned, until stop (idempotent). Wakes
	// that find the channel full coalesce, and a wake may come without a
	// tombstone. An error means the repository cannot watch key now, and
	// the caller polls.
	WatchFreed(ctx context.Context, key string) (freed <-chan struct{}, stop func(), err error)
}

// WatchFreedOrPoll watches key's tombstones in r if r is a Watcher that
// can watch key now; otherwise it returns a nil channel, which never
// receives, and a stop that does nothing: the caller then polls.
func WatchFreedOrPoll(ctx context.Context, r Repository, key string) (freed <-chan struct{}, stop func()) {
	if w, ok := r.(Watcher); ok {
		if freed, stop, err := w.WatchFreed(ctx, key); err == nil {
			return freed, stop
		}
	}
	return nil, func() {}
}
