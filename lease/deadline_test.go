package lease_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform/platformtest"
)

// TestNoRenewalStartsAfterTheDeadline: when the deadline and a renewal's
// retry fall due together, the manager declares the lease lost instead of
// starting the renewal, which could succeed and keep the lease past the
// moment it promised to declare itself lost.
func TestNoRenewalStartsAfterTheDeadline(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	m, _ := newManager(t, f.Platform, repo)
	h := mustAcquire(t, m, "k")
	deadline := f.Clock.Monotonic() + ttl // the claim started no later than now
	repo.failNext(-1)
	for f.Clock.Monotonic() < deadline-hb/4 {
		step(t, f.Clock, hb/4)
	}
	settle(t, f.Clock) // the last retry before the deadline has failed
	repo.failNext(0)
	repo.log()
	step(t, f.Clock, hb/4+hb/8) // past the deadline; a renewal's retry falls due too
	wantLost(t, h)
	for _, c := range repo.log() {
		if c.at >= deadline {
			t.Errorf("a renewal started %v after the deadline", c.at-deadline)
		}
	}
}

// TestCloseOfALeaseLostAtItsDeadline: a lease lost at its deadline still
// owns its record, so Close writes the tombstone of its generation; Err
// stays ErrLost.
func TestCloseOfALeaseLostAtItsDeadline(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	m, _ := newManager(t, f.Platform, repo)
	h := mustAcquire(t, m, "k")
	repo.failNext(-1)
	for elapsed := time.Duration(0); elapsed < ttl; elapsed += hb / 4 {
		step(t, f.Clock, hb/4)
	}
	wantLost(t, h)
	repo.failNext(0)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if s := mustLoad(t, repo, "k").Snapshot; !s.Released || s.Generation != h.Token() {
		t.Errorf("record after Close %+v, want the tombstone of generation %d", s, h.Token())
	}
	wantLost(t, h)
}

// TestBreakRetryBreaksOnlyTheHolderItRead: a holder that took the key
// over while Break retried is not broken: Break reports the conflict,
// naming it, and writes nothing.
func TestBreakRetryBreaksOnlyTheHolderItRead(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	writeBehind(t, repo, "k", store.Snapshot{Generation: 1, Holder: stranger, TTL: ttl}) // the stuck holder
	successor := stranger
	successor.PID = 78
	repo.during(func() { // between Break's read and its write, another host takes over
		writeBehind(t, repo.Repository, "k", store.Snapshot{Generation: 2, Holder: successor, TTL: ttl})
	})
	_, err := lease.Break(t.Context(), repo, f.Platform, "k", false)
	if !errors.Is(err, store.ErrRevisionConflict) || !strings.Contains(err.Error(), "pid 78") {
		t.Fatalf("Break = %v, want a revision conflict naming the new holder", err)
	}
	if after := mustLoad(t, repo, "k"); after.Snapshot.Broken || after.Snapshot.Generation != 2 {
		t.Errorf("record %+v, want generation 2 unbroken", after.Snapshot)
	}
}

// TestDeadlineDeclaredWhileOnEventBlocks: a hook that blocks delays no
// declaration of loss. With OnEvent stuck on the first failed renewal,
// the lease is still declared lost at its deadline, and the hook hears
// of the loss, in order, once it returns.
func TestDeadlineDeclaredWhileOnEventBlocks(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	blocked, unblock := make(chan struct{}), make(chan struct{})
	var once sync.Once
	rec := newRecorder(f.Clock)
	m, _ := newManager(t, f.Platform, repo, func(c *lease.Config) {
		c.OnEvent = func(e lease.Event) {
			if e.Kind == lease.RenewalFailed {
				once.Do(func() {
					close(blocked)
					<-unblock
				})
			}
			rec.on(e)
		}
	})
	h := mustAcquire(t, m, "k")
	deadline := f.Clock.Monotonic() + ttl
	repo.failNext(-1)
	settle(t, f.Clock)
	advance(f.Clock, hb) // the renewal fails, and its report blocks
	<-blocked
	advance(f.Clock, deadline-f.Clock.Monotonic())
	select {
	case <-h.Lost():
	case <-time.After(waitLimit):
		close(unblock)
		t.Fatalf("the deadline passed with OnEvent blocked, and the lease was not declared lost in %v", waitLimit)
	}
	if err := h.Err(); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Err() = %v, want ErrLost", err)
	}
	close(unblock)
	rec.waitCount(t, lease.Lost, 1)
	var kinds []lease.EventKind
	for _, e := range rec.all() {
		kinds = append(kinds, e.Kind)
	}
	if want := []lease.EventKind{lease.Acquired, lease.RenewalFailed, lease.Lost}; !slices.Equal(kinds, want) {
		t.Errorf("events %v, want %v", kinds, want)
	}
}
