package lease_test

import (
	"context"
	"errors"
	"testing"

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

// TestAcquireWaitAfterRelease: a waiter takes the lease within a tenth of
// the TTL after its holder releases it.
func TestAcquireWaitAfterRelease(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		a, _ := newManager(t, f.Platform, repo)
		b, _ := newManager(t, f.Platform, repo)
		h := mustAcquire(t, a, "k")
		got := waitAsync(t.Context(), b, "k")
		settle(t, f.Clock, 3) // the holder's renewal and deadline, the waiter's next try
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		advance(f.Clock, ttl/10)
		r := receive(t, got, "AcquireWait")
		if r.err != nil || r.h.Token() != h.Token()+1 {
			t.Fatalf("AcquireWait = %v, %v; want the next generation", r.h, r.err)
		}
	})
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
		// Wait for the next try to be armed, or for the result.
		ctx, cancel := context.WithCancel(t.Context())
		armed := make(chan error, 1)
		go func() { armed <- f.Clock.WaitForTimers(ctx, 1) }()
		select {
		case r := <-got:
			cancel()
			check(r)
			return
		case err := <-armed:
			cancel()
			if err != nil {
				t.Fatal(err)
			}
		}
		if f.Clock.Monotonic()-start > 2*ttl {
			t.Fatal("the silent holder was not taken over within two TTLs")
		}
		advance(f.Clock, ttl/10)
	}
}

// TestAcquireWaitEndsWithItsContext: a ctx that ends ends the wait with
// its cause, holding nothing; the holder keeps the lease.
func TestAcquireWaitEndsWithItsContext(t *testing.T) {
	f := platformtest.New(t)
	repo := lease.NewMemoryRepository()
	a, _ := newManager(t, f.Platform, repo)
	b, _ := newManager(t, f.Platform, repo)
	h := mustAcquire(t, a, "k")
	cause := errors.New("enough")
	ctx, cancel := context.WithCancelCause(t.Context())
	got := waitAsync(ctx, b, "k")
	settle(t, f.Clock, 3)
	cancel(cause)
	if r := receive(t, got, "AcquireWait"); r.h != nil || !errors.Is(r.err, cause) {
		t.Fatalf("AcquireWait = %v, %v; want nothing and the ctx's cause", r.h, r.err)
	}
	wantNotEnded(t, h)
	if s := mustLoad(t, repo, "k").Snapshot; s.Generation != h.Token() || s.Released {
		t.Fatalf("the record changed: %+v", s)
	}
}
