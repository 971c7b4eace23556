package lease_test

import (
	"context"
	"errors"
	"testing"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
)

// TestBreakFencesOutTheHolder: an operator breaks a live holder's lease
// with force. Its next fenced work is refused, its next renewal declares
// the lease lost, the record names the breaker, and the next acquisition
// takes the key at once with a generation above the break's.
func TestBreakFencesOutTheHolder(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		m, _ := newManager(t, f.Platform, repo)
		h := mustAcquire(t, m, "k")
		operator := f.As(f.Processes.Start())
		if _, err := lease.Break(t.Context(), repo, operator, "k", false); !errors.Is(err, lease.ErrHeld) {
			t.Fatalf("Break of a live holder without force = %v, want a *HeldError", err)
		}
		broken, err := lease.Break(t.Context(), repo, operator, "k", true)
		if err != nil || broken.Generation != h.Token() {
			t.Fatalf("Break = %+v, %v; want the holder's snapshot of generation %d", broken, err, h.Token())
		}
		self, _ := operator.Process.Self()
		if s := mustLoad(t, repo, "k").Snapshot; !s.Released || !s.Broken || s.Generation != h.Token()+1 || s.Holder != self {
			t.Fatalf("record after the break %+v, want a broken tombstone of generation %d naming the breaker", s, h.Token()+1)
		}
		ran := false
		err = h.RunFenced(t.Context(), func(context.Context, lease.Token) error { ran = true; return nil })
		if ran || !errors.Is(err, lease.ErrLost) {
			t.Fatalf("fenced work after the break: ran %v, err %v; want refused with ErrLost", ran, err)
		}
		wantLost(t, h)
		next, _ := newManager(t, f.Platform, repo)
		if h2 := mustAcquire(t, next, "k"); h2.Token() != h.Token()+2 {
			t.Fatalf("the next acquisition got token %d, want %d", h2.Token(), h.Token()+2)
		}
	})
}

// TestBreakRenewalDeclaresLoss: a holder that does no fenced work learns
// of the break at its next renewal.
func TestBreakRenewalDeclaresLoss(t *testing.T) {
	f := platformtest.New(t)
	repo := lease.NewMemoryRepository()
	m, _ := newManager(t, f.Platform, repo)
	h := mustAcquire(t, m, "k")
	if _, err := lease.Break(t.Context(), repo, f.As(f.Processes.Start()), "k", true); err != nil {
		t.Fatal(err)
	}
	step(t, f.Clock, hb)
	wantLost(t, h)
}

// TestBreakWhom: a holder that cannot be judged alive here is broken
// without force; a key with no lease is ErrNotHeld and stays as it was.
func TestBreakWhom(t *testing.T) {
	f := platformtest.New(t)
	repo := lease.NewMemoryRepository()
	dead := f.Processes.Start()
	f.Processes.Kill(dead.PID)
	f.Processes.Reap(dead.PID)
	for key, holder := range map[string]platform.Identity{"dead": dead, "remote": stranger} {
		writeBehind(t, repo, key, store.Snapshot{Generation: 4, Holder: holder, TTL: ttl})
		if _, err := lease.Break(t.Context(), repo, f.Platform, key, false); err != nil {
			t.Errorf("Break of a %s holder = %v, want it broken", key, err)
		}
		if s := mustLoad(t, repo, key).Snapshot; !s.Broken || s.Generation != 5 {
			t.Errorf("%s: record %+v, want broken at generation 5", key, s)
		}
	}
	writeBehind(t, repo, "released", store.Snapshot{Generation: 4, Holder: stranger, TTL: ttl, Released: true})
	for _, key := range []string{"released", "missing", "dead"} { // "dead" is broken already
		before, had, _ := repo.Load(t.Context(), key)
		if _, err := lease.Break(t.Context(), repo, f.Platform, key, true); !errors.Is(err, lease.ErrNotHeld) {
			t.Errorf("Break(%s) = %v, want ErrNotHeld", key, err)
		}
		if after, has, _ := repo.Load(t.Context(), key); has != had || after.Revision != before.Revision {
			t.Errorf("Break(%s) wrote: %+v, want %+v", key, after, before)
		}
	}
	var ke *store.KeyError
	if _, err := lease.Break(t.Context(), repo, f.Platform, "", true); !errors.As(err, &ke) {
		t.Errorf("Break of an empty key = %v, want a *store.KeyError", err)
	}
}

// TestBreakRefusesAHolderOfUnknownLiveness: a holder on this process
// table that cannot be inspected is judged Unknown, which counts as
// alive: Break refuses it without force, writing nothing, and breaks it
// with force.
func TestBreakRefusesAHolderOfUnknownLiveness(t *testing.T) {
	f := platformtest.New(t)
	repo := lease.NewMemoryRepository()
	hidden := f.Processes.Start()
	f.Processes.Hide(hidden.PID, false)
	if v := f.Processes.Judge(hidden); v.Liveness != platform.Unknown {
		t.Fatalf("set-up: the hidden holder is judged %v, want unknown", v)
	}
	writeBehind(t, repo, "k", store.Snapshot{Generation: 4, Holder: hidden, TTL: ttl})
	before := mustLoad(t, repo, "k")
	if _, err := lease.Break(t.Context(), repo, f.Platform, "k", false); !errors.Is(err, lease.ErrHeld) {
		t.Errorf("Break without force of a holder of unknown liveness = %v, want a *HeldError", err)
	}
	if after := mustLoad(t, repo, "k"); after.Revision != before.Revision {
		t.Errorf("the refused break wrote %+v", after)
	}
	if _, err := lease.Break(t.Context(), repo, f.Platform, "k", true); err != nil {
		t.Fatalf("Break with force = %v", err)
	}
	if s := mustLoad(t, repo, "k").Snapshot; !s.Broken || s.Generation != 5 {
		t.Errorf("record %+v, want broken at generation 5", s)
	}
}
