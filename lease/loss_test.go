package lease_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/examples/strictrenewal"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/internal/repotest"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform/platformtest"
)

// wantLoss requires h lost with a *LossError of cause c, the same error
// in Err() and in the one Lost event, and returns it.
func wantLoss(t *testing.T, h *lease.Lease, rec *recorder, c lease.LossCause) *lease.LossError {
	t.Helper()
	wantLost(t, h)
	loss, ok := errors.AsType[*lease.LossError](h.Err())
	if !ok || loss.Cause != c || loss.Key != h.Key() || loss.Token != h.Token() {
		t.Fatalf("Err() = %#v, want a *LossError of cause %v for %q generation %d", h.Err(), c, h.Key(), h.Token())
	}
	evs, _ := rec.waitCount(t, lease.Lost, 1)
	if evs[0].Err != h.Err() {
		t.Fatalf("the Lost event carries %v, want Err()'s %v", evs[0].Err, h.Err())
	}
	return loss
}

// TestLossAtDeadlineCountsFailedRenewals: renewals that fail until the
// deadline end the lease with their count and the last failure.
func TestLossAtDeadlineCountsFailedRenewals(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	m, rec := newManager(t, f.Platform, repo)
	h := mustAcquire(t, m, "k")
	repo.failNext(-1)
	for range ttl / hb * 8 { // quarter-heartbeat retries, past the deadline
		if h.Err() != nil {
			break
		}
		step(t, f.Clock, hb/4)
	}
	loss := wantLoss(t, h, rec, lease.LostDeadline)
	failed, _ := rec.of(lease.RenewalFailed)
	if loss.FailedRenewals == 0 || loss.FailedRenewals != len(failed) || !errors.Is(loss.LastErr, repotest.ErrInjected) {
		t.Fatalf("loss after %d failed renewals (%d events), last %v", loss.FailedRenewals, len(failed), loss.LastErr)
	}
	if !strings.Contains(loss.Error(), "failed renewals, the last: ") {
		t.Fatalf("the loss says %q", loss.Error())
	}
}

// TestLossOnConflictNamesTheSuccessor: a renewal's conflict ends the
// lease, naming the holder that moved the record.
func TestLossOnConflictNamesTheSuccessor(t *testing.T) {
	f := platformtest.New(t)
	repo := lease.NewMemoryRepository()
	m, rec := newManager(t, f.Platform, repo)
	h := mustAcquire(t, m, "k")
	writeBehind(t, repo, "k", store.Snapshot{Generation: h.Token() + 1, Holder: stranger, TTL: ttl})
	step(t, f.Clock, hb)
	loss := wantLoss(t, h, rec, lease.LostMoved)
	if loss.Conflict == nil || loss.Record == nil || loss.Record.Holder != stranger || loss.Record.Generation != h.Token()+1 {
		t.Fatalf("loss %#v, want the conflict and the stranger's record", loss)
	}
	if !strings.Contains(loss.Error(), "holds generation 2 of "+stranger.String()) {
		t.Fatalf("the loss says %q", loss.Error())
	}
}

// TestLossByBreakNamesTheOperator: an operator's break shows at the next
// renewal as a break, by whom and when.
func TestLossByBreakNamesTheOperator(t *testing.T) {
	f := platformtest.New(t)
	repo := lease.NewMemoryRepository()
	m, rec := newManager(t, f.Platform, repo)
	h := mustAcquire(t, m, "k")
	operator := f.Processes.Start()
	if _, err := lease.Break(t.Context(), repo, f.As(operator), "k", true); err != nil {
		t.Fatal(err)
	}
	step(t, f.Clock, hb)
	loss := wantLoss(t, h, rec, lease.LostBroken)
	if loss.Record == nil || loss.Record.Holder != operator || !loss.Record.Broken {
		t.Fatalf("loss %#v, want the operator's broken tombstone", loss)
	}
	if !strings.Contains(loss.Error(), "broken by "+operator.String()) {
		t.Fatalf("the loss says %q", loss.Error())
	}
}

// TestCloseOfTheManagerSaysSo: leases the Manager's Close releases end
// with an error that matches ErrReleased and ErrClosed; one its holder
// closed matches ErrReleased only.
func TestCloseOfTheManagerSaysSo(t *testing.T) {
	f := platformtest.New(t)
	m, _ := newManager(t, f.Platform, lease.NewMemoryRepository())
	mine, theirs := mustAcquire(t, m, "mine"), mustAcquire(t, m, "theirs")
	if err := mine.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mine.Err(); !errors.Is(err, lease.ErrReleased) || errors.Is(err, lease.ErrClosed) {
		t.Errorf("closed by its holder: %v", err)
	}
	if err := theirs.Err(); !errors.Is(err, lease.ErrReleased) || !errors.Is(err, lease.ErrClosed) || errors.Is(err, lease.ErrLost) {
		t.Errorf("released by the manager's Close: %v", err)
	}
}

// TestLossByAPolicyOnAFailedRenewal: a policy that makes a failed renewal
// loss at once says so, with the failure.
func TestLossByAPolicyOnAFailedRenewal(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	m, rec := newManager(t, f.Platform, repo, func(c *lease.Config) { c.Policy = strictrenewal.StrictLeasePolicy })
	h := mustAcquire(t, m, "k")
	repo.failNext(1)
	step(t, f.Clock, hb)
	loss := wantLoss(t, h, rec, lease.LostRenewalFailed)
	if loss.FailedRenewals != 1 || !errors.Is(loss.LastErr, repotest.ErrInjected) {
		t.Fatalf("loss %#v, want the one failure", loss)
	}
}

// TestDeadlineIsWhenLossIsDeclared: Deadline moves on with each renewal,
// the lease is lost when the clock reaches it without one, and it is
// zero then.
func TestDeadlineIsWhenLossIsDeclared(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	m, _ := newManager(t, f.Platform, repo)
	h := mustAcquire(t, m, "k")
	if got, want := h.Deadline(), f.Clock.Now().Add(ttl); !got.Equal(want) {
		t.Fatalf("deadline %v after acquiring, want the TTL on: %v", got, want)
	}
	step(t, f.Clock, hb)
	settle(t, f.Clock)
	first := h.Deadline()
	if want := f.Clock.Now().Add(ttl); !first.Equal(want) {
		t.Fatalf("deadline %v after a renewal, want %v", first, want)
	}
	repo.failNext(-1)
	step(t, f.Clock, first.Sub(f.Clock.Now())-time.Nanosecond)
	settle(t, f.Clock)
	if h.Err() != nil || !h.Deadline().Equal(first) {
		t.Fatalf("a nanosecond before its deadline: %v, deadline %v", h.Err(), h.Deadline())
	}
	advance(f.Clock, time.Nanosecond)
	wantLost(t, h)
	if !h.Deadline().IsZero() {
		t.Fatalf("deadline %v after the loss, want zero", h.Deadline())
	}
}
