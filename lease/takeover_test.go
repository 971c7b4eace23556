package lease_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
)

// wantTakeover acquires key with m, which must succeed without the clock
// moving, with token want, reporting a takeover from prev, dead on proof
// or silent.
func wantTakeover(t *testing.T, m *lease.Manager, rec *recorder, key string, want lease.Token, prev platform.Identity, dead bool) *lease.Lease {
	t.Helper()
	h := mustAcquire(t, m, key)
	if h.Token() != want {
		t.Fatalf("token %d, want %d", h.Token(), want)
	}
	evs, _ := rec.of(lease.TakenOver)
	if len(evs) != 1 || evs[0].Key != key || evs[0].Token != want || evs[0].Previous == nil || *evs[0].Previous != prev || evs[0].PreviousDead != dead {
		t.Fatalf("taken over events %+v, want one from %v, dead %v", evs, prev, dead)
	}
	return h
}

// TestTakeoverDeadHolder: a holder on this process table whose process
// is gone, a zombie, or whose pid now belongs to another process is
// taken over at once; its manager then finds the lease lost at its next
// renewal, and its fenced work is refused.
func TestTakeoverDeadHolder(t *testing.T) {
	tests := []struct {
		name string
		die  func(p *platformtest.Processes, pid int)
	}{
		{"killed and reaped", func(p *platformtest.Processes, pid int) { p.Kill(pid); p.Reap(pid) }},
		{"zombie", func(p *platformtest.Processes, pid int) { p.Kill(pid) }},
		{"pid reused", func(p *platformtest.Processes, pid int) { p.Kill(pid); p.Reap(pid); p.Reuse(pid) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
				id := f.Processes.Start()
				holder, _ := newManager(t, f.As(id), repo)
				old := mustAcquire(t, holder, "k")
				tt.die(f.Processes, id.PID)
				m, rec := newManager(t, f.Platform, repo)
				start := f.Clock.Monotonic()
				h := wantTakeover(t, m, rec, "k", old.Token()+1, id, true)
				if f.Clock.Monotonic() != start {
					t.Fatal("the clock moved")
				}
				// The old holder's manager, still running here, loses the
				// lease at its next renewal.
				step(t, f.Clock, hb)
				wantLost(t, old)
				err := old.RunFenced(t.Context(), func(ctx context.Context, _ lease.Token) error {
					t.Error("the dead holder's fenced work ran")
					return nil
				})
				if !errors.Is(err, lease.ErrLost) {
					t.Fatalf("old RunFenced = %v, want ErrLost", err)
				}
				wantNotEnded(t, h)
			})
		})
	}
}

// TestTakeoverSilentHolder: a holder that stopped renewing while it is
// alive (or cannot be judged), or that lives in another process table, is
// taken over exactly TTL after this observer first saw its current
// record on its own monotonic clock: a *HeldError at TTL-1ns, the lease
// at TTL. How old the record was before the observer first saw it does
// not count.
func TestTakeoverSilentHolder(t *testing.T) {
	type holder struct {
		id    platform.Identity
		token lease.Token
	}
	tests := []struct {
		name  string
		start func(t *testing.T, f *platformtest.Fake, repo store.Repository) holder
	}{
		{"manager with a frozen clock", func(t *testing.T, f *platformtest.Fake, repo store.Repository) holder {
			id := f.Processes.Start()
			m, _ := newManager(t, frozen(f, id), repo)
			return holder{id, mustAcquire(t, m, "k").Token()}
		}},
		{"record written by a live process", func(t *testing.T, f *platformtest.Fake, repo store.Repository) holder {
			id := f.Processes.Start()
			writeBehind(t, repo, "k", store.Snapshot{Generation: 5, Holder: id, RenewedAt: f.Clock.Now(), TTL: ttl})
			return holder{id, 5}
		}},
		{"process hidden from us", func(t *testing.T, f *platformtest.Fake, repo store.Repository) holder {
			id := f.Processes.Start()
			writeBehind(t, repo, "k", store.Snapshot{Generation: 5, Holder: id, TTL: ttl})
			f.Processes.Hide(id.PID, false)
			return holder{id, 5}
		}},
		{"remote holder", func(t *testing.T, f *platformtest.Fake, repo store.Repository) holder {
			writeBehind(t, repo, "k", store.Snapshot{Generation: 5, Holder: stranger, TTL: ttl})
			return holder{stranger, 5}
		}},
		{"remote holder whose pid is free here", func(t *testing.T, f *platformtest.Fake, repo store.Repository) holder {
			id := stranger
			id.PID = 999999
			writeBehind(t, repo, "k", store.Snapshot{Generation: 5, Holder: id, TTL: ttl})
			return holder{id, 5}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
				h := tt.start(t, f, repo)
				advance(f.Clock, 10*ttl) // long before this observer looks
				m, rec := newManager(t, f.Platform, repo)
				wantHeld(t, m, "k", h.id)
				advance(f.Clock, ttl/2)
				wantHeld(t, m, "k", h.id)
				advance(f.Clock, ttl/2-time.Nanosecond)
				wantHeld(t, m, "k", h.id)
				advance(f.Clock, time.Nanosecond)
				wantTakeover(t, m, rec, "k", h.token+1, h.id, false)
			})
		})
	}
}

// TestTakeoverWaitsTheLongerTTL: an observer waits out the holder's TTL,
// which bounds when the holder declares itself lost, when it is longer
// than its own, and its own when that is longer.
func TestTakeoverWaitsTheLongerTTL(t *testing.T) {
	for _, tt := range []struct {
		name              string
		holderTTL, waited time.Duration
	}{
		{"holder's TTL longer", 3 * ttl, 3 * ttl},
		{"observer's TTL longer", ttl / 2, ttl},
	} {
		t.Run(tt.name, func(t *testing.T) {
			forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
				id := f.Processes.Start()
				writeBehind(t, repo, "k", store.Snapshot{Generation: 1, Holder: id, TTL: tt.holderTTL})
				m, rec := newManager(t, f.Platform, repo)
				wantHeld(t, m, "k", id)
				advance(f.Clock, tt.waited-time.Nanosecond)
				wantHeld(t, m, "k", id)
				advance(f.Clock, time.Nanosecond)
				wantTakeover(t, m, rec, "k", 2, id, false)
			})
		})
	}
}

// TestTakeoverIgnoresTheWallClock: the observer's TTL runs on its
// monotonic clock; steps of the wall clock either way change nothing.
func TestTakeoverIgnoresTheWallClock(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		id := f.Processes.Start()
		writeBehind(t, repo, "k", store.Snapshot{Generation: 1, Holder: id, RenewedAt: f.Clock.Now(), TTL: ttl})
		m, rec := newManager(t, f.Platform, repo)
		wantHeld(t, m, "k", id)
		for _, jump := range []time.Duration{100 * ttl, -200 * ttl, 100 * ttl} {
			f.Clock.SetWall(f.Clock.Now().Add(jump))
			wantHeld(t, m, "k", id)
		}
		advance(f.Clock, ttl-time.Nanosecond)
		f.Clock.SetWall(f.Clock.Now().Add(-time.Hour))
		wantHeld(t, m, "k", id)
		advance(f.Clock, time.Nanosecond)
		wantTakeover(t, m, rec, "k", 2, id, false)
	})
}

// TestTakeoverClockRestartsOnNewRecord: a record that changes while the
// observer waits (the holder renewed) restarts the observer's TTL from
// when it sees the new revision.
func TestTakeoverClockRestartsOnNewRecord(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		id := f.Processes.Start()
		writeBehind(t, repo, "k", store.Snapshot{Generation: 1, Holder: id, TTL: ttl})
		m, rec := newManager(t, f.Platform, repo)
		wantHeld(t, m, "k", id)
		advance(f.Clock, ttl/2)
		writeBehind(t, repo, "k", store.Snapshot{Generation: 1, Holder: id, TTL: ttl}) // a renewal
		advance(f.Clock, ttl/2)
		wantHeld(t, m, "k", id) // first sight of the renewal
		advance(f.Clock, ttl-time.Nanosecond)
		wantHeld(t, m, "k", id)
		advance(f.Clock, time.Nanosecond)
		wantTakeover(t, m, rec, "k", 2, id, false)
	})
}

// TestTakeoverFrozenHolderFencedRefused: after a live holder that stopped
// renewing is taken over, its RunFenced re-reads the successor's record,
// refuses the work, and declares the lease lost, though its own clock
// never told it so.
func TestTakeoverFrozenHolderFencedRefused(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		id := f.Processes.Start()
		holder, hrec := newManager(t, frozen(f, id), repo)
		old := mustAcquire(t, holder, "k")
		m, rec := newManager(t, f.Platform, repo)
		wantHeld(t, m, "k", id)
		advance(f.Clock, ttl)
		h := wantTakeover(t, m, rec, "k", old.Token()+1, id, false)
		wantNotEnded(t, old) // it does not know yet
		err := old.RunFenced(t.Context(), func(context.Context, lease.Token) error {
			t.Error("fenced work ran with the old token")
			return nil
		})
		if !errors.Is(err, lease.ErrLost) {
			t.Fatalf("old RunFenced = %v, want ErrLost", err)
		}
		wantLost(t, old)
		if evs, _ := hrec.of(lease.Lost); len(evs) != 1 {
			t.Fatalf("old holder's lost events: %+v", evs)
		}
		if err := old.Close(); err != nil {
			t.Fatal(err)
		}
		if s := mustLoad(t, repo, "k").Snapshot; s.Generation != h.Token() || s.Released {
			t.Fatalf("the old holder's Close changed the successor's record: %+v", s)
		}
	})
}

// TestAcquireRace: of many managers (processes of one table) acquiring a
// free key at once, exactly one gets it; every other gets a *HeldError
// naming the winner.
func TestAcquireRace(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		const n = 8
		ids := make([]platform.Identity, n)
		managers := make([]*lease.Manager, n)
		for i := range managers {
			ids[i] = f.Processes.Start()
			managers[i], _ = newManager(t, f.As(ids[i]), repo)
		}
		// One round's managers may happen to run one after another; a
		// lost compare-and-swap shows in some round, each on a fresh key.
		for round := range raceRounds {
			acquireRaceRound(t, repo, managers, ids, fmt.Sprintf("k%d", round))
		}
	})
}

// acquireRaceRound has managers acquire key at once and checks that one
// wins generation 1 and the others are told it holds the key.
func acquireRaceRound(t *testing.T, repo store.Repository, managers []*lease.Manager, ids []platform.Identity, key string) {
	t.Helper()
	n := len(managers)
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, m := range managers {
		wg.Go(func() {
			<-start
			_, errs[i] = m.Acquire(t.Context(), key)
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		if err == nil {
			if winner >= 0 {
				t.Fatalf("managers %d and %d both acquired the key", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatalf("nobody acquired the key: %v", errs)
	}
	for i, err := range errs {
		var held *lease.HeldError
		if i != winner && (!errors.As(err, &held) || held.Holder == nil || *held.Holder != ids[winner]) {
			t.Errorf("manager %d: %v, want a *HeldError naming %v", i, err, ids[winner])
		}
	}
	if s := mustLoad(t, repo, key).Snapshot; s.Generation != 1 || s.Holder != ids[winner] {
		t.Errorf("record %+v, want generation 1 of the winner", s)
	}
}

// TestTakeoverInOneProcess: two managers of one process share a store. The
// first one's renewal stalls until its lease has passed its deadline and
// the second has taken the silent lease over; the stalled renewal then
// lands over the first one's revision, and must meet a conflict, though
// the record names this same process as holder: the successor's record
// stays, and only its handle may run fenced work.
func TestTakeoverInOneProcess(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		slow := newFaultRepo(repo, f.Clock) // stalls only the renewal below
		first, _ := newManager(t, f.Platform, slow)
		second, _ := newManager(t, f.Platform, slow)
		old := mustAcquire(t, first, "k")
		entered, proceed := make(chan struct{}), make(chan struct{})
		slow.during(func() { close(entered); <-proceed })
		step(t, f.Clock, hb)
		receive(t, entered, "the renewal")
		if _, err := second.Acquire(t.Context(), "k"); !errors.Is(err, lease.ErrHeld) {
			t.Fatalf("Acquire of a live holder's lease = %v, want ErrHeld", err)
		}
		advance(f.Clock, ttl)
		wantLost(t, old)
		h := mustAcquire(t, second, "k")
		close(proceed)
		if err := old.Close(); err != nil { // waits for the renewal's answer
			t.Fatalf("closing the lost handle: %v", err)
		}
		if s := mustLoad(t, repo, "k").Snapshot; s.Generation != h.Token() || s.Released {
			t.Fatalf("the stalled renewal replaced the successor's record: %+v, want generation %d held", s, h.Token())
		}
		var got lease.Token
		if err := h.RunFenced(t.Context(), func(_ context.Context, tok lease.Token) error { got = tok; return nil }); err != nil || got != h.Token() {
			t.Fatalf("the successor's RunFenced = %v with token %d, want nil with %d", err, got, h.Token())
		}
	})
}
