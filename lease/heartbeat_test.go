package lease_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/internal/repotest"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform/platformtest"
)

// TestHeartbeatEveryHeartbeat: a held lease is renewed exactly once a
// heartbeat, at the heartbeat and not a nanosecond before, each renewal a
// new revision of the same generation.
func TestHeartbeatEveryHeartbeat(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, inner store.Repository) {
		repo := newFaultRepo(inner, f.Clock)
		m, rec := newManager(t, f.Platform, repo)
		h := mustAcquire(t, m, "k")
		t0 := f.Clock.Monotonic()
		repo.log()
		const beats = 5
		for i := 1; i <= beats; i++ {
			step(t, f.Clock, hb-time.Nanosecond)
			step(t, f.Clock, time.Nanosecond)
			rec.waitCount(t, lease.Renewed, i)
		}
		calls := repo.log()
		if len(calls) != beats {
			t.Fatalf("%d writes in %d heartbeats: %+v", len(calls), beats, calls)
		}
		for i, c := range calls {
			if want := t0 + time.Duration(i+1)*hb; c.at != want || !slices.Equal(c.keys, []string{"k"}) {
				t.Errorf("write %d at %v of %v, want at %v of [k]", i, c.at-t0, c.keys, want-t0)
			}
		}
		r := mustLoad(t, repo, "k")
		if r.Snapshot.Generation != h.Token() || r.Snapshot.Released {
			t.Errorf("record after renewals: %+v, want generation %d held", r.Snapshot, h.Token())
		}
		wantNotEnded(t, h)
	})
}

// TestCloseStopsHeartbeat: a closed lease is no longer renewed while
// another lease of the manager still is.
func TestCloseStopsHeartbeat(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	m, rec := newManager(t, f.Platform, repo)
	closed, kept := mustAcquire(t, m, "closed"), mustAcquire(t, m, "kept")
	step(t, f.Clock, hb)
	rec.waitCount(t, lease.Renewed, 2)
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	wantReleased(t, closed)
	repo.log()
	for i := 1; i <= 3; i++ {
		step(t, f.Clock, hb)
		rec.waitCount(t, lease.Renewed, 2+i)
	}
	for _, c := range repo.log() {
		if slices.Contains(c.keys, "closed") {
			t.Fatalf("closed lease written after Close: %+v", c)
		}
	}
	if s := mustLoad(t, repo, "closed").Snapshot; !s.Released {
		t.Fatalf("closed lease's record: %+v, want a tombstone", s)
	}
	wantNotEnded(t, kept)
}

// TestRenewalFailureLostFromStart: failed renewals are retried, and the
// lease is declared lost exactly TTL after the start of its last
// successful renewal (not its end, and not a nanosecond early).
func TestRenewalFailureLostFromStart(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, inner store.Repository) {
		repo := newFaultRepo(inner, f.Clock)
		m, rec := newManager(t, f.Platform, repo)
		h := mustAcquire(t, m, "k")
		// The first renewal takes half a heartbeat from its start.
		repo.during(func() { advance(f.Clock, hb/2) })
		step(t, f.Clock, hb)
		_, at := rec.waitCount(t, lease.Renewed, 1)
		start := at[0] - hb/2
		repo.failNext(-1)
		for now := f.Clock.Monotonic(); now < start+ttl-time.Nanosecond; now = f.Clock.Monotonic() {
			step(t, f.Clock, min(hb/10, start+ttl-time.Nanosecond-now))
		}
		settle(t, f.Clock) // the deadline has not fired
		wantNotEnded(t, h)
		fails, _ := rec.of(lease.RenewalFailed)
		if len(fails) < 2 {
			t.Fatalf("%d failed renewals before the deadline, want retries", len(fails))
		}
		for _, e := range fails {
			if !errors.Is(e.Err, repotest.ErrInjected) || e.Key != "k" || e.Token != h.Token() {
				t.Fatalf("renewal failed event %+v", e)
			}
		}
		advance(f.Clock, time.Nanosecond)
		wantLost(t, h)
		_, lostAt := rec.waitCount(t, lease.Lost, 1)
		if lostAt[0] != start+ttl {
			t.Fatalf("lost %v after the last renewal started, want the TTL %v", lostAt[0]-start, ttl)
		}
	})
}

// TestDeadlineIgnoresTheWallClock: a holder whose renewals all fail
// declares the lease lost TTL after its claim started on its monotonic
// clock; steps of the wall clock either way move the deadline neither
// earlier nor later.
func TestDeadlineIgnoresTheWallClock(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, inner store.Repository) {
		repo := newFaultRepo(inner, f.Clock)
		m, rec := newManager(t, f.Platform, repo)
		start := f.Clock.Monotonic()
		h := mustAcquire(t, m, "k")
		repo.failNext(-1)
		for i, jump := range []time.Duration{10 * ttl, -20 * ttl, ttl / 2} {
			f.Clock.SetWall(f.Clock.Now().Add(jump))
			step(t, f.Clock, hb-time.Duration(i)) // still short of the TTL in all
		}
		f.Clock.SetWall(f.Clock.Now().Add(100 * ttl))
		for now := f.Clock.Monotonic(); now < start+ttl-time.Nanosecond; now = f.Clock.Monotonic() {
			step(t, f.Clock, min(hb/10, start+ttl-time.Nanosecond-now))
		}
		settle(t, f.Clock)
		wantNotEnded(t, h)
		advance(f.Clock, time.Nanosecond)
		wantLost(t, h)
		if _, lostAt := rec.waitCount(t, lease.Lost, 1); lostAt[0] != start+ttl {
			t.Fatalf("lost %v after the claim started, want the TTL %v", lostAt[0]-start, ttl)
		}
	})
}

// TestRenewalRecovers: a renewal that fails a few times and then
// succeeds keeps the lease, and later heartbeats go on as before.
func TestRenewalRecovers(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	m, rec := newManager(t, f.Platform, repo)
	h := mustAcquire(t, m, "k")
	repo.failNext(2)
	step(t, f.Clock, hb)
	rec.waitCount(t, lease.RenewalFailed, 1)
	for {
		if evs, _ := rec.of(lease.Renewed); len(evs) == 1 {
			break
		}
		step(t, f.Clock, hb/10)
	}
	if fails, _ := rec.of(lease.RenewalFailed); len(fails) != 2 {
		t.Fatalf("%d failed renewals, want 2", len(fails))
	}
	for i := 2; i <= 3*int(ttl/hb); i++ {
		step(t, f.Clock, hb)
		rec.waitCount(t, lease.Renewed, i)
	}
	wantNotEnded(t, h)
}

// TestConflictIsLossAtOnce: a renewal that finds its record moved by
// another writer declares the lease lost at once, at the first heartbeat,
// whatever the writer wrote.
func TestConflictIsLossAtOnce(t *testing.T) {
	tests := []struct {
		name string
		snap func(self store.Snapshot) store.Snapshot
	}{
		{"successor", func(s store.Snapshot) store.Snapshot {
			s.Generation++
			s.Holder = stranger
			return s
		}},
		{"same generation rewritten", func(s store.Snapshot) store.Snapshot { return s }},
		{"tombstone", func(s store.Snapshot) store.Snapshot { s.Released = true; return s }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
				m, rec := newManager(t, f.Platform, repo)
				h := mustAcquire(t, m, "k")
				t0 := f.Clock.Monotonic()
				written := tt.snap(mustLoad(t, repo, "k").Snapshot)
				rev := writeBehind(t, repo, "k", written)
				step(t, f.Clock, hb)
				wantLost(t, h)
				if _, at := rec.waitCount(t, lease.Lost, 1); at[0] != t0+hb {
					t.Errorf("lost %v after acquisition, want at the first heartbeat", at[0]-t0)
				}
				if r := mustLoad(t, repo, "k"); r.Revision != rev {
					t.Errorf("the lost holder wrote over the other writer: revision %d, want %d", r.Revision, rev)
				}
			})
		})
	}
}

// TestHeartbeatBatches: the leases of one manager are renewed together,
// one SaveBatch a heartbeat, where the repository is a BatchSaver.
func TestHeartbeatBatches(t *testing.T) {
	for _, kind := range []string{"memory", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			f := platformtest.New(t)
			repo := batchRepo{newFaultRepo(openRepo(t, f, kind), f.Clock)}
			m, rec := newManager(t, f.Platform, repo)
			keys := []string{"a", "b", "c", "d"}
			for _, k := range keys {
				mustAcquire(t, m, k)
			}
			repo.log()
			const beats = 3
			for i := 1; i <= beats; i++ {
				step(t, f.Clock, hb)
				rec.waitCount(t, lease.Renewed, i*len(keys))
			}
			calls := repo.log()
			if len(calls) != beats {
				t.Fatalf("%d writes for %d heartbeats of %d leases: %+v", len(calls), beats, len(keys), calls)
			}
			for _, c := range calls {
				got := slices.Sorted(slices.Values(c.keys))
				if !c.batch || !slices.Equal(got, keys) {
					t.Errorf("write %+v, want one batch of %v", c, keys)
				}
			}
		})
	}
}

// TestHeartbeatBatchesLeasesAcquiredApart: leases acquired half a
// heartbeat apart come to share one batch a heartbeat, and each is still
// renewed at least once a heartbeat.
func TestHeartbeatBatchesLeasesAcquiredApart(t *testing.T) {
	f := platformtest.New(t)
	repo := batchRepo{newFaultRepo(lease.NewMemoryRepository(), f.Clock)}
	m, rec := newManager(t, f.Platform, repo)
	t0 := f.Clock.Monotonic()
	mustAcquire(t, m, "a")
	step(t, f.Clock, hb/2)
	mustAcquire(t, m, "b")
	repo.log()
	const beats = 6
	for f.Clock.Monotonic() < t0+beats*hb {
		step(t, f.Clock, hb/4)
	}
	settle(t, f.Clock)
	calls := repo.log()
	// From the second heartbeat on, one write a heartbeat.
	var late []saveCall
	for _, c := range calls {
		if c.at >= t0+2*hb {
			late = append(late, c)
		}
	}
	if len(late) > beats-1 {
		t.Errorf("%d writes for %d heartbeats of two leases, want at most one a heartbeat: %v", len(late), beats-1, atOffsets(late, t0))
	}
	renewed, at := rec.of(lease.Renewed)
	last := map[string]time.Duration{"a": t0, "b": t0 + hb/2}
	for i, e := range renewed {
		if gap := at[i] - last[e.Key]; gap > hb {
			t.Errorf("%s renewed %v after its previous write, more than a heartbeat", e.Key, gap)
		}
		last[e.Key] = at[i]
	}
}

// atOffsets describes calls by their times after t0, for messages.
func atOffsets(calls []saveCall, t0 time.Duration) []string {
	var out []string
	for _, c := range calls {
		out = append(out, (c.at-t0).String()+" "+slices.Sorted(slices.Values(c.keys))[0]+"…")
	}
	return out
}

// TestNoRenewalEventsAfterLoss: a renewal still in flight when the
// deadline passes ends the lease; its outcome, success or failure, is
// reported neither as renewed nor as a failure to be retried, since
// nothing is retried after the loss.
func TestNoRenewalEventsAfterLoss(t *testing.T) {
	for _, fail := range []bool{false, true} {
		name := map[bool]string{false: "save succeeds", true: "save fails"}[fail]
		t.Run(name, func(t *testing.T) {
			f := platformtest.New(t)
			repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
			m, rec := newManager(t, f.Platform, repo)
			h := mustAcquire(t, m, "k")
			entered, proceed := make(chan struct{}), make(chan struct{})
			repo.during(func() { close(entered); <-proceed })
			if fail {
				repo.failNext(1)
			}
			step(t, f.Clock, hb)
			receive(t, entered, "the renewal")
			advance(f.Clock, ttl-hb) // the deadline passes while it is in flight
			wantLost(t, h)
			close(proceed)
			// Close waits for the renewal in flight to be handled.
			if err := h.Close(); err != nil {
				t.Fatal(err)
			}
			evs := rec.all()
			for i, e := range evs {
				if e.Kind == lease.Lost {
					for _, late := range evs[i+1:] {
						if late.Kind == lease.Renewed || late.Kind == lease.RenewalFailed {
							t.Errorf("%q event after the lease was lost: %v", late.Kind, evs)
						}
					}
				}
			}
		})
	}
}

// TestLossMargin: with a LossMargin, a holder whose renewals fail declares
// the lease lost that margin before its TTL from the start of its claim,
// while an observer still waits the whole TTL for it.
func TestLossMargin(t *testing.T) {
	const margin = hb
	f := platformtest.New(t)
	inner := lease.NewMemoryRepository()
	repo := newFaultRepo(inner, f.Clock)
	m, rec := newManager(t, f.Platform, repo, func(c *lease.Config) { c.LossMargin = margin })
	start := f.Clock.Monotonic()
	h := mustAcquire(t, m, "k")
	repo.failNext(-1)
	for now := f.Clock.Monotonic(); now < start+ttl-margin-time.Nanosecond; now = f.Clock.Monotonic() {
		step(t, f.Clock, min(hb/10, start+ttl-margin-time.Nanosecond-now))
	}
	settle(t, f.Clock)
	wantNotEnded(t, h)
	advance(f.Clock, time.Nanosecond)
	wantLost(t, h)
	if _, lostAt := rec.waitCount(t, lease.Lost, 1); lostAt[0] != start+ttl-margin {
		t.Fatalf("lost %v after the claim started, want the TTL less the margin, %v", lostAt[0]-start, ttl-margin)
	}
	if s := mustLoad(t, inner, "k").Snapshot; s.TTL != ttl {
		t.Fatalf("the record's TTL is %v, want the whole TTL %v for observers", s.TTL, ttl)
	}
}
