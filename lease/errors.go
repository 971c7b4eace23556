package lease

import (
	"errors"
	"fmt"

	"github.com/rivus/collab/lease/internal/quote"
	"github.com/rivus/collab/platform"
)

var (
	// ErrHeld is matched by every *HeldError, for callers who need to
	// know that the key is held and not by whom.
	ErrHeld = errors.New("lease: held")
	// ErrLost is matched by the error of a lease its holder declared
	// lost, a *LossError that says why: it did not renew within TTL of
	// the start of its last successful write, or another writer (a
	// successor, an operator's break) moved its record. Fenced work in
	// flight is cancelled with that error as the cause.
	ErrLost = errors.New("lease: lost")
	// ErrReleased is the error of a lease after Close released it.
	ErrReleased = errors.New("lease: released")
	// ErrClosed is the error of Acquire on a Manager that Close has
	// begun to close.
	ErrClosed = errors.New("lease: manager closed")
	// ErrFenceLost is the cause with which fenced work is cancelled when
	// the repository loses the fence under it (see store.FenceWatcher).
	ErrFenceLost = errors.New("lease: fence lost")
	// ErrNotHeld is the error of Break on a key with no lease to break:
	// no record, or a tombstone.
	ErrNotHeld = errors.New("lease: not held")
)

// WaitError is AcquireWait's error when its wait ends between attempts:
// its context ended (Err is the context's cause) or its Manager was
// closed (Err is ErrClosed). Last is the refusal of its last attempt, so
// that a caller can say who held the key to the end. It matches both:
// errors.Is(err, context.DeadlineExceeded) and errors.Is(err, ErrHeld)
// are true of a wait that timed out.
type WaitError struct {
	Err  error
	Last *HeldError
}

func (e *WaitError) Error() string {
	return fmt.Sprintf("lease: waiting for %s: %v (%v)", quote.Key(e.Last.Key), e.Err, e.Last)
}

// Unwrap returns the cause and the last refusal.
func (e *WaitError) Unwrap() []error { return []error{e.Err, e.Last} }

// HeldError reports that another live holder holds the key. It matches
// ErrHeld.
type HeldError struct {
	Key string
	// Holder is the holder's identity, or nil when unknown.
	Holder *platform.Identity
}

func (e *HeldError) Error() string {
	if e.Holder == nil {
		return fmt.Sprintf("lease: %s is held", quote.Key(e.Key))
	}
	return fmt.Sprintf("lease: %s is held by %s", quote.Key(e.Key), e.Holder)
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// ConfigError reports an invalid Config field; NewManager returns it
// before any I/O.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("lease: invalid config: %s %s", e.Field, e.Reason)
}
