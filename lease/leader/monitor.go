package leader

import (
	"fmt"

	"github.com/rivus/collab/internal/contract"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/internal/hook"
)

// The contract monitor checks a term's duties, which the lease's own
// monitor cannot see, since they are the order of the term's steps:
//
//  0. Lead never begins with a live context on a lease that has ended
//     (lost as it was acquired, or during OnStarted);
//  1. Lead's context has ended before the lease is let go, so that
//     nothing of the term believes it leads once a successor may;
//  2. OnStopped hears of the term only once its lease has ended (let go,
//     or lost), so that a caller that starts something else there does
//     not overlap the term;
//  3. a term's lease is closed before Run campaigns again, also a lost
//     one: the manager lets go of the handle, and a record the loss left
//     behind (lost at its deadline, nobody has taken over) gets the
//     tombstone, so that nobody waits out the TTL for a holder that has
//     stepped down.
//
// It runs where the build tag collabmonitor is set (make test and the
// campaign's workers); the constant monitoring is false otherwise, and
// the compiler drops every call. A broken duty ends the process
// (internal/contract) with a report.

// leading checks duty 0, as Lead is about to begin.
func (t *leaderTerm) leading() {
	if t.lease.Err() != nil && t.leadCtx.Err() == nil {
		t.broke("Lead begins with a live context on a lease that has ended")
	}
}

// releasing checks duty 1, as the term's lease is about to be let go.
func (t *leaderTerm) releasing() {
	if t.leadCtx.Err() == nil {
		t.broke("the lease is let go while Lead's context is live")
	}
}

// stopping checks duty 2, as OnStopped is about to be called.
func (t *leaderTerm) stopping() {
	if t.lease.Err() == nil {
		t.broke("OnStopped is called while the term's lease is still held")
	}
}

// campaigning checks duty 3, as Run is about to campaign after the term
// of last; nil before the first term.
func campaigning(last *lease.Lease) {
	if last != nil && !hook.Closed(last) {
		broke(last, "Run campaigns again before the term's lease is closed")
	}
}

func (t *leaderTerm) broke(duty string) { broke(t.lease, duty) }

func broke(l *lease.Lease, duty string) {
	contract.Fail(fmt.Sprintf("leader: contract monitor: key %q, term %d: %s\n", l.Key(), l.Token(), duty))
}
