package lease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform/platformtest"
)

// acquired is what AcquireWait returned.
type acquired struct {
	h   *lease.Lease
	err error
}

// waitAsync runs m.AcquireWait(ctx, key) and delivers its result.
func waitAsync(ctx context.Context, m *lease.Manager, key string) <-chan acquired {
	got := make(chan acquired, 1)
	go func() {
		h, err := m.AcquireWait(ctx, key)
		got <- acquired{h, err}
	}()
	return got
}

// waitSleeping waits until the AcquireWait call of m behind got has made
// its first attempt and waits on m's loop.
func waitSleeping(t *testing.T, m *lease.Manager, got <-chan acquired) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for lease.Sleeping(m) == 0 {
		select {
		case r := <-got:
			t.Fatalf("AcquireWait returned before it waited: %v, %v", r.h, r.err)
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("AcquireWait did not wait within %v", waitLimit)
		}
	}
}

// TestAcquireWaitAfterRelease: a waiter is woken by its holder's release
// and takes the lease with the clock standing still, on every repository
// that watches tombstones (store.Watcher); on one that does not, it
// takes it within a tenth of the TTL, at its next poll.
func TestAcquireWaitAfterRelease(t *testing.T) {
	for _, watched := range []bool{true, false} {
		t.Run(map[bool]string{true: "watched", false: "polled"}[watched], func(t *testing.T) {
			forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
				if _, ok := repo.(store.Watcher); !ok {
					t.Fatalf("%T does not watch tombstones", repo)
				}
				if !watched {
					repo = struct{ store.Repository }{repo} // hides WatchFreed
				}
				a, _ := newManager(t, f.Platform, repo)
				b, _ := newManager(t, f.Platform, repo)
				h := mustAcquire(t, a, "k")
				got := waitAsync(t.Context(), b, "k")
				waitSleeping(t, b, got)
				settle(t, f.Clock) // the holder's renewal and deadline, and the waiter's next try, wait on the clock
				if err := h.Close(); err != nil {
					t.Fatal(err)
				}
				if !watched {
					advance(f.Clock, ttl/10)
				}
				r := receive(t, got, "AcquireWait")
				if r.err != nil || r.h.Token() != h.Token()+1 {
					t.Fatalf("AcquireWait = %v, %v; want the next generation", r.h, r.err)
				}
			})
		})
	}
}

// TestAcquireWaitTakesOverASilentHolder: a holder that stops renewing is
// taken over a TTL after the waiter first saw its record, not before.
func TestAcquireWaitTakesOverASilentHolder(t *testing.T) {
	f := platformtest.New(t)
	repo := lease.NewMemoryRepository()
	writeBehind(t, repo, "k", store.Snapshot{Generation: 1, Holder: stranger, TTL: ttl})
	m, _ := newManager(t, f.Platform, repo)
	start, startWall := f.Clock.Monotonic(), f.Clock.Now()
	got := waitAsync(t.Context(), m, "k")
	waitSleeping(t, m, got)
	check := func(r acquired) {
		if r.err != nil || r.h.Token() != 2 {
			t.Fatalf("AcquireWait = %v, %v; want generation 2", r.h, r.err)
		}
		// When the claim was written, on the fake clock (the loop may
		// have moved it on before it saw the result).
		if at := mustLoad(t, repo, "k").Snapshot.RenewedAt.Sub(startWall); at < ttl || at > ttl+ttl/10 {
			t.Fatalf("taken over %v after the first sight, want once the TTL %v has passed, within a tenth of it", at, ttl)
		}
	}
	for {
		settle(t, f.Clock) // the next try waits on the loop, or the wait is over
		select {
		case r := <-got:
			check(r)
			return
		default:
		}
		if f.Clock.Monotonic()-start > 2*ttl {
			t.Fatal("the silent holder was not taken over within two TTLs")
		}
		advance(f.Clock, ttl/10)
	}
}

// TestAcquireWaitEndsWithItsContext: a ctx that ends ends the wait with
// its cause and the last attempt's refusal, holding nothing; the holder
// keeps the lease.
func TestAcquireWaitEndsWithItsContext(t *testing.T) {
	f := platformtest.New(t)
	repo := lease.NewMemoryRepository()
	a, _ := newManager(t, f.Platform, repo)
	b, _ := newManager(t, f.Platform, repo)
	h := mustAcquire(t, a, "k")
	cause := errors.New("enough")
	ctx, cancel := context.WithCancelCause(t.Context())
	got := waitAsync(ctx, b, "k")
	waitSleeping(t, b, got)
	cancel(cause)
	r := receive(t, got, "AcquireWait")
	if r.h != nil || !errors.Is(r.err, cause) {
		t.Fatalf("AcquireWait = %v, %v; want nothing and the ctx's cause", r.h, r.err)
	}
	var we *lease.WaitError
	if !errors.As(r.err, &we) || !errors.Is(r.err, lease.ErrHeld) || we.Last.Key != "k" || we.Last.Holder == nil {
		t.Fatalf("AcquireWait's error %v (%T) does not carry the last refusal", r.err, r.err)
	}
	wantNotEnded(t, h)
	if s := mustLoad(t, repo, "k").Snapshot; s.Generation != h.Token() || s.Released {
		t.Fatalf("the record changed: %+v", s)
	}
}
