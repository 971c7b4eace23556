package leader_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/leader"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
)

const ttl = time.Minute

// stranger holds a lease from another process table, so it is judged by
// the TTL alone.
var stranger = platform.Identity{Host: "elsewhere", BootID: "boot-elsewhere", PID: 77, StartTime: 4242}

// term is what the callbacks heard of one term.
type term struct {
	token lease.Token
	cause error // OnStopped's; nil while it runs
}

// election runs leader.Run on a fake clock and reports each term.
type election struct {
	f       *platformtest.Fake
	repo    store.Repository
	started chan lease.Token
	stopped chan term
	done    chan error
}

// elect starts Run over repo with Lead from lead (nil: wait for the ctx).
func elect(t *testing.T, ctx context.Context, repo store.Repository, lead func(ctx context.Context, token lease.Token) error) *election {
	t.Helper()
	f := platformtest.New(t)
	m, err := lease.NewManager(lease.Config{TTL: ttl, Heartbeat: ttl / 10, Repository: repo, Platform: f.Platform})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if lead == nil {
		lead = func(ctx context.Context, _ lease.Token) error { <-ctx.Done(); return context.Cause(ctx) }
	}
	e := &election{f: f, repo: repo, started: make(chan lease.Token, 4), stopped: make(chan term, 4), done: make(chan error, 1)}
	go func() {
		e.done <- leader.Run(ctx, leader.Config{Manager: m, Key: "k", Lead: lead,
			OnStarted: func(token lease.Token) { e.started <- token },
			OnStopped: func(token lease.Token, cause error) { e.stopped <- term{token, cause} }})
	}()
	t.Cleanup(func() {
		select {
		case <-e.done:
		case <-time.After(time.Minute):
			t.Error("Run did not return")
		}
	})
	return e
}

// receive waits for a value of ch, moving the fake clock on by step each
// time a timer is armed, up to a thousand steps.
func receive[T any](t *testing.T, e *election, ch <-chan T, step time.Duration, what string) T {
	t.Helper()
	for range 1000 {
		ctx, cancel := context.WithCancel(t.Context())
		armed := make(chan error, 1)
		go func() { armed <- e.f.Clock.WaitForTimers(ctx, 1) }()
		select {
		case v := <-ch:
			cancel()
			<-armed
			return v
		case err := <-armed:
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			e.f.Clock.Advance(step)
		case <-time.After(time.Minute):
			cancel()
			t.Fatalf("no %s within a minute", what)
		}
	}
	t.Fatalf("no %s within a thousand steps of %v", what, step)
	panic("unreachable")
}

// overwrite writes s over key's record, as another writer would.
func overwrite(t *testing.T, repo store.Repository, s store.Snapshot) {
	t.Helper()
	rec, ok, err := repo.Load(t.Context(), "k")
	if err != nil || !ok {
		t.Fatalf("Load = %v, %v", ok, err)
	}
	if _, err := repo.Save(t.Context(), "k", s, rec.Revision); err != nil {
		t.Fatal(err)
	}
}

// TestRunReleasesWhenItsContextEnds: the leader's Lead is cancelled with
// the cause of Run's context, the lease is released, so that another
// leads at once, and Run returns the cause.
func TestRunReleasesWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancelCause(t.Context())
	repo := lease.NewMemoryRepository()
	e := elect(t, ctx, repo, nil)
	if tok := <-e.started; tok != 1 {
		t.Fatalf("first term's token %d, want 1", tok)
	}
	stop := errors.New("shutting down")
	cancel(stop)
	if got := <-e.stopped; got.token != 1 || !errors.Is(got.cause, stop) {
		t.Fatalf("OnStopped(%d, %v), want (1, %v)", got.token, got.cause, stop)
	}
	if err := <-e.done; !errors.Is(err, stop) {
		t.Fatalf("Run = %v, want %v", err, stop)
	}
	e.done <- nil // for the cleanup
	if rec, _, _ := repo.Load(t.Context(), "k"); !rec.Snapshot.Released || rec.Snapshot.Generation != 1 {
		t.Fatalf("record %+v, want released at generation 1", rec.Snapshot)
	}
}

// TestRunCampaignsAgainAfterALoss: another writer takes the record; the
// leader's Lead is cancelled with cause lease.ErrLost, and Run campaigns
// again, leading once the other holder lets go.
func TestRunCampaignsAgainAfterALoss(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	repo := lease.NewMemoryRepository()
	leadCause := make(chan error, 4)
	e := elect(t, ctx, repo, func(ctx context.Context, _ lease.Token) error {
		<-ctx.Done()
		leadCause <- context.Cause(ctx)
		return nil
	})
	<-e.started
	overwrite(t, repo, store.Snapshot{Generation: 2, Holder: stranger, TTL: ttl, RenewedAt: e.f.Clock.Now()})
	if got := receive(t, e, e.stopped, ttl/10, "end of the first term"); got.token != 1 || !errors.Is(got.cause, lease.ErrLost) {
		t.Fatalf("OnStopped(%d, %v), want (1, lease.ErrLost)", got.token, got.cause)
	}
	if cause := <-leadCause; !errors.Is(cause, lease.ErrLost) {
		t.Fatalf("Lead's context ended with %v, want lease.ErrLost", cause)
	}
	overwrite(t, repo, store.Snapshot{Generation: 2, Holder: stranger, TTL: ttl, Released: true, RenewedAt: e.f.Clock.Now()})
	if tok := receive(t, e, e.started, ttl/20, "second term"); tok != 3 {
		t.Fatalf("second term's token %d, want 3", tok)
	}
	cancel()
	<-e.stopped
}

// TestLeadReturningStepsDown: when Lead returns while leading, Run
// releases the lease and returns what Lead returned.
func TestLeadReturningStepsDown(t *testing.T) {
	done := errors.New("done")
	repo := lease.NewMemoryRepository()
	e := elect(t, t.Context(), repo, func(context.Context, lease.Token) error { return done })
	if got := <-e.stopped; got.token != 1 || !errors.Is(got.cause, done) {
		t.Fatalf("OnStopped(%d, %v), want (1, %v)", got.token, got.cause, done)
	}
	err := <-e.done
	e.done <- err
	if !errors.Is(err, done) {
		t.Fatalf("Run = %v, want %v", err, done)
	}
	if rec, _, _ := repo.Load(t.Context(), "k"); !rec.Snapshot.Released {
		t.Fatalf("record %+v, want released", rec.Snapshot)
	}
}

// failingLoads fails its first n Loads.
type failingLoads struct {
	store.Repository
	n atomic.Int32
}

var errDown = errors.New("store down")

func (r *failingLoads) Load(ctx context.Context, key string) (store.Record, bool, error) {
	if r.n.Add(-1) >= 0 {
		return store.Record{}, false, errDown
	}
	return r.Repository.Load(ctx, key)
}

// TestRunRetriesRepositoryErrors: a failed attempt is reported and tried
// again after RetryPeriod; the campaign goes on.
func TestRunRetriesRepositoryErrors(t *testing.T) {
	repo := &failingLoads{Repository: lease.NewMemoryRepository()}
	repo.n.Store(2)
	m, err := lease.NewManager(lease.Config{TTL: ttl, Heartbeat: ttl / 10, Repository: repo})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var reported []error
	err = leader.Run(t.Context(), leader.Config{Manager: m, Key: "k", RetryPeriod: time.Millisecond,
		OnError: func(err error) { reported = append(reported, err) },
		Lead:    func(context.Context, lease.Token) error { return nil }})
	if err != nil || len(reported) != 2 || !errors.Is(reported[0], errDown) || !errors.Is(reported[1], errDown) {
		t.Fatalf("Run = %v after reporting %v; want nil after two failures", err, reported)
	}
}

// TestRunEndsWithItsManager: a closed manager ends the campaign.
func TestRunEndsWithItsManager(t *testing.T) {
	m, err := lease.NewManager(lease.Config{TTL: ttl, Heartbeat: ttl / 10, Repository: lease.NewMemoryRepository()})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	err = leader.Run(t.Context(), leader.Config{Manager: m, Key: "k", Lead: func(context.Context, lease.Token) error { return nil }})
	if !errors.Is(err, lease.ErrClosed) {
		t.Fatalf("Run = %v, want lease.ErrClosed", err)
	}
}

func TestConfigErrors(t *testing.T) {
	m, err := lease.NewManager(lease.Config{TTL: ttl, Heartbeat: ttl / 10, Repository: lease.NewMemoryRepository()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	lead := func(context.Context, lease.Token) error { return nil }
	for field, cfg := range map[string]leader.Config{
		"Manager":     {Key: "k", Lead: lead},
		"Key":         {Manager: m, Lead: lead},
		"Lead":        {Manager: m, Key: "k"},
		"RetryPeriod": {Manager: m, Key: "k", Lead: lead, RetryPeriod: -time.Second},
		"Value":       {Manager: m, Key: "k", Lead: lead, Value: "a\x00b"},
	} {
		var ce *leader.ConfigError
		if err := leader.Run(t.Context(), cfg); !errors.As(err, &ce) || ce.Field != field {
			t.Errorf("Run without a valid %s = %v, want a *ConfigError naming it", field, err)
		}
	}
}

// TestRunEndsWhenItsManagerClosesMidTerm: closing the manager releases
// the lease under Lead; Run ends with lease.ErrClosed.
func TestRunEndsWhenItsManagerClosesMidTerm(t *testing.T) {
	m, err := lease.NewManager(lease.Config{TTL: ttl, Heartbeat: ttl / 10, Repository: lease.NewMemoryRepository()})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- leader.Run(t.Context(), leader.Config{Manager: m, Key: "k", Lead: func(ctx context.Context, _ lease.Token) error {
			close(started)
			<-ctx.Done()
			return context.Cause(ctx)
		}})
	}()
	<-started
	m.Close()
	if err := <-done; !errors.Is(err, lease.ErrClosed) {
		t.Fatalf("Run = %v, want lease.ErrClosed", err)
	}
}
