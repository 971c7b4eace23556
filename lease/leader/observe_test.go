package leader_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/leader"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
)

// observer runs Observe on a fake clock, a report at a time.
type observer struct {
	t       *testing.T
	f       *platformtest.Fake
	reports chan leader.Leader
}

const observeEvery = time.Second

func observe(t *testing.T, f *platformtest.Fake, repo store.Repository, key string) *observer {
	o := &observer{t: t, f: f, reports: make(chan leader.Leader, 16)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- leader.Observe(ctx, repo, f.Platform, key, observeEvery, func(l leader.Leader) { o.reports <- l })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Observe returned %v, want its context's cause", err)
		}
	})
	return o
}

// next returns the next report.
func (o *observer) next() leader.Leader {
	o.t.Helper()
	select {
	case l := <-o.reports:
		return l
	case <-time.After(time.Minute):
		o.t.Fatal("no report within a minute")
		return leader.Leader{}
	}
}

// tick lets Observe read once more, after d, and requires it to report
// nothing new.
func (o *observer) tick(d time.Duration) {
	o.t.Helper()
	if err := o.f.Clock.WaitForTimers(o.t.Context(), 1); err != nil {
		o.t.Fatal(err)
	}
	o.f.Clock.Advance(d)
}

// TestObserve: an observer hears that the key has no leader, then the
// leader's term, its silence once its record is TTL old, its death, and
// the key's release; a read that changes nothing is not reported.
func TestObserve(t *testing.T) {
	f := platformtest.New(t)
	repo := lease.NewMemoryRepository()
	o := observe(t, f, repo, "k")
	if l := o.next(); l.Token != 0 {
		t.Fatalf("first report %+v, want no leader", l)
	}
	holder := f.Processes.Start()
	rev, err := repo.Save(t.Context(), "k", store.Snapshot{Generation: 1, Holder: holder, RenewedAt: f.Clock.Now(), TTL: 3 * observeEvery}, 0)
	if err != nil {
		t.Fatal(err)
	}
	o.tick(observeEvery)
	l := o.next()
	if l.Token != 1 || l.Holder != holder || l.Liveness != platform.Alive || l.Silent || !l.Since.Equal(f.Clock.Now()) {
		t.Fatalf("report %+v, want holder's live term 1 since now", l)
	}
	since := l.Since
	o.tick(observeEvery) // TTL not yet passed: nothing new
	o.tick(observeEvery)
	o.tick(observeEvery)
	if l := o.next(); !l.Silent || l.Token != 1 || !l.Since.Equal(since) {
		t.Fatalf("report %+v, want term 1 silent, since %v", l, since)
	}
	f.Processes.Kill(holder.PID)
	o.tick(observeEvery)
	if l := o.next(); l.Liveness != platform.Dead || l.Token != 1 {
		t.Fatalf("report %+v, want term 1's holder dead", l)
	}
	if _, err := repo.Save(t.Context(), "k", store.Snapshot{Generation: 1, Holder: holder, Released: true, RenewedAt: f.Clock.Now(), TTL: time.Second}, rev); err != nil {
		t.Fatal(err)
	}
	o.tick(observeEvery)
	if l := o.next(); l != (leader.Leader{}) {
		t.Fatalf("report %+v, want no leader after the release", l)
	}
	select {
	case l := <-o.reports:
		t.Fatalf("an extra report %+v", l)
	default:
	}
}
