package lease

import (
	"errors"
	"fmt"
	"time"

	"github.com/rivus/collab/lease/internal/quote"
	"github.com/rivus/collab/lease/store"
)

// LossCause says why a holder declared its lease lost.
type LossCause uint8

// The causes of a loss.
const (
	// LostDeadline: no renewal succeeded within the TTL (less the loss
	// margin) of the start of the last successful write: they failed, or
	// none was made (the process was paused, the store did not answer).
	LostDeadline LossCause = iota + 1
	// LostMoved: the record holds another generation, or another
	// holder's tombstone: a successor took the key over.
	LostMoved
	// LostBroken: an operator broke the lease (Break, collab lease
	// break): the record is a broken tombstone.
	LostBroken
	// LostRenewalFailed: a renewal failed and the policy declared the
	// lease lost at once, not at its deadline (a custom policy).
	LostRenewalFailed
	// LostPolicy: the policy declared the lease lost on a trigger that
	// none of the other causes explains (a custom policy).
	LostPolicy
)

var lossCauseNames = [...]string{LostDeadline: "deadline", LostMoved: "moved", LostBroken: "broken",
	LostRenewalFailed: "renewal failed", LostPolicy: "policy"}

func (c LossCause) String() string {
	if int(c) < len(lossCauseNames) && lossCauseNames[c] != "" {
		return lossCauseNames[c]
	}
	return fmt.Sprintf("LossCause(%d)", uint8(c))
}

// LossError is the error of a lease its holder declared lost, saying why:
// Err returns it, the Lost event carries it, and fenced work in flight is
// cancelled with it as the cause. It matches ErrLost.
type LossError struct {
	Key   string
	Token Token
	Cause LossCause
	// FailedRenewals counts the renewals that failed since the last one
	// that succeeded, and LastErr is the last failure (LostDeadline,
	// LostRenewalFailed).
	FailedRenewals int
	LastErr        error
	// Conflict is the revision conflict a renewal met, when that is how
	// the loss was learnt (LostMoved, LostBroken).
	Conflict *store.RevisionConflictError
	// Record is the record that showed the loss (LostMoved, LostBroken):
	// its holder and generation, and for a break who broke it (Holder)
	// and when (RenewedAt, on the breaker's clock). It is nil when a
	// renewal's conflict showed it and the record could not be read
	// then.
	Record *store.Snapshot
}

// Unwrap returns ErrLost.
func (e *LossError) Unwrap() error { return ErrLost }

func (e *LossError) Error() string {
	return fmt.Sprintf("lease: lost %s (generation %d): %s", quote.Key(e.Key), e.Token, e.why())
}

func (e *LossError) why() string {
	r := e.Record
	switch {
	case e.Cause == LostDeadline && e.FailedRenewals == 0:
		return "its deadline passed with no renewal made (the process paused, or the store did not answer)"
	case e.Cause == LostDeadline:
		return fmt.Sprintf("its deadline passed after %d failed renewals, the last: %v", e.FailedRenewals, e.LastErr)
	case e.Cause == LostRenewalFailed:
		return fmt.Sprintf("a renewal failed, which its policy counts as loss: %v", e.LastErr)
	case e.Cause == LostPolicy:
		return "its policy declared it lost, on no renewal conflict, failure or deadline"
	case e.Cause == LostBroken:
		return fmt.Sprintf("broken by %v at %s", r.Holder, r.RenewedAt.Format(time.RFC3339))
	case r == nil && e.Conflict == nil:
		return "its record is gone"
	case r == nil:
		return fmt.Sprintf("another writer moved the record (%v)", e.Conflict)
	case r.Released:
		return fmt.Sprintf("the record is a tombstone of generation %d by %v", r.Generation, r.Holder)
	}
	return fmt.Sprintf("the record holds generation %d of %v", r.Generation, r.Holder)
}

// movedLoss is the loss that record rec shows, found by a renewal's
// conflict c (nil when a re-read found it); rec is nil when it could not
// be read.
func movedLoss(h *Lease, c *store.RevisionConflictError, rec *store.Snapshot) *LossError {
	e := &LossError{Key: h.key, Token: h.token, Cause: LostMoved, Conflict: c, Record: rec}
	if rec != nil && rec.Released && rec.Broken {
		e.Cause = LostBroken
	}
	return e
}

// deadlineLoss is the loss of h at its deadline.
func deadlineLoss(h *Lease) *LossError {
	return &LossError{Key: h.key, Token: h.token, Cause: LostDeadline, FailedRenewals: h.failedRenewals, LastErr: h.lastRenewErr}
}

// conflictOf returns err's revision conflict, or nil.
func conflictOf(err error) *store.RevisionConflictError {
	c, _ := errors.AsType[*store.RevisionConflictError](err)
	return c
}

// errReleasedByClose is Err of a lease that its Manager's Close released:
// it matches ErrReleased, and ErrClosed, which says why.
var errReleasedByClose error = releasedByClose{}

type releasedByClose struct{}

func (releasedByClose) Error() string { return "lease: released: the manager was closed" }

func (releasedByClose) Is(target error) bool { return target == ErrReleased || target == ErrClosed }
