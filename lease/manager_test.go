package lease_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/internal/repotest"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform/platformtest"
)

// TestNewManagerConfig: NewManager refuses every invalid field with a
// *ConfigError naming it, before it touches the repository or the
// process table, and accepts the boundary Heartbeat × 2 = TTL.
func TestNewManagerConfig(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*lease.Config)
		field string // "" when valid
	}{
		{"valid", func(*lease.Config) {}, ""},
		{"heartbeat half the TTL", func(c *lease.Config) { c.Heartbeat = c.TTL / 2 }, ""},
		{"lease policy", func(c *lease.Config) { c.Policy = fsm.LeasePolicy }, ""},
		{"zero TTL", func(c *lease.Config) { c.TTL = 0 }, "TTL"},
		{"negative TTL", func(c *lease.Config) { c.TTL = -time.Second }, "TTL"},
		{"zero heartbeat", func(c *lease.Config) { c.Heartbeat = 0 }, "Heartbeat"},
		{"negative heartbeat", func(c *lease.Config) { c.Heartbeat = -time.Second }, "Heartbeat"},
		{"heartbeat over half the TTL", func(c *lease.Config) { c.Heartbeat = c.TTL/2 + time.Nanosecond }, "Heartbeat"},
		{"heartbeat that overflows when doubled", func(c *lease.Config) { c.Heartbeat = 1 << 62 }, "Heartbeat"},
		{"loss margin", func(c *lease.Config) { c.LossMargin = c.TTL - 2*c.Heartbeat }, ""},
		{"negative loss margin", func(c *lease.Config) { c.LossMargin = -time.Nanosecond }, "LossMargin"},
		{"loss margin of the whole TTL", func(c *lease.Config) { c.LossMargin = c.TTL }, "LossMargin"},
		{"loss margin that leaves no room for two heartbeats", func(c *lease.Config) { c.LossMargin = c.TTL - 2*c.Heartbeat + time.Nanosecond }, "Heartbeat"},
		{"no repository", func(c *lease.Config) { c.Repository = nil }, "Repository"},
		{"policy of another family", func(c *lease.Config) { c.Policy = fsm.LanePolicy }, "Policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := platformtest.New(t)
			repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
			proc := &platformtest.CountingProcess{Process: f.Processes}
			p := *f.Platform
			p.Process = proc
			cfg := lease.Config{TTL: ttl, Heartbeat: hb, Repository: repo, Platform: &p}
			tt.edit(&cfg)
			m, err := lease.NewManager(cfg)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("NewManager = %v, want a manager", err)
				}
				if err := m.Close(); err != nil {
					t.Fatal(err)
				}
				return
			}
			if m != nil {
				_ = m.Close()
				t.Fatalf("NewManager accepted the config; want a *ConfigError naming %s", tt.field)
			}
			var ce *lease.ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field {
				t.Fatalf("NewManager = %v; want a *ConfigError naming %s", err, tt.field)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("message %q does not name %s", err, tt.field)
			}
			if calls := repo.log(); len(calls) != 0 || proc.Calls() != 0 {
				t.Errorf("invalid config: %d writes and %d process calls, want none", len(calls), proc.Calls())
			}
		})
	}
}

// TestAcquireHeldWhileRenewed: while a live holder renews, every Acquire
// of another manager fails with a *HeldError naming the holder, for many
// TTLs on the observer's clock.
func TestAcquireHeldWhileRenewed(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		holderID := f.Processes.Start()
		holder, hrec := newManager(t, f.As(holderID), repo)
		observer, _ := newManager(t, f.Platform, repo)
		h := mustAcquire(t, holder, "task:42")
		for i := 1; i <= 3*int(ttl/hb); i++ {
			wantHeld(t, observer, "task:42", holderID)
			step(t, f.Clock, hb)
			hrec.waitCount(t, lease.Renewed, i)
		}
		wantHeld(t, observer, "task:42", holderID)
		wantNotEnded(t, h)
	})
}

// TestGenerationGrows: every acquisition takes the next generation, a
// release leaves a tombstone that keeps it, and tombstones written by
// others count too.
func TestGenerationGrows(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		m, _ := newManager(t, f.Platform, repo)
		self, _ := f.Processes.Self()
		var lastRev store.Revision
		for want := lease.Token(1); want <= 3; want++ {
			h := mustAcquire(t, m, "k")
			if h.Token() != want || h.Key() != "k" {
				t.Fatalf("acquisition %d: token %d of %q, want %d", want, h.Token(), h.Key(), want)
			}
			if err := h.Close(); err != nil {
				t.Fatal(err)
			}
			rec := mustLoad(t, repo, "k")
			if s := rec.Snapshot; !s.Released || s.Generation != want || s.Holder != self || s.TTL != ttl {
				t.Fatalf("after release: %+v, want a tombstone of generation %d by %v", s, want, self)
			}
			if rec.Revision <= lastRev {
				t.Fatalf("revision %d after %d", rec.Revision, lastRev)
			}
			lastRev = rec.Revision
		}
		if _, err := repo.Save(t.Context(), "old", store.Snapshot{Generation: 41, Holder: stranger, Released: true, TTL: ttl}, 0); err != nil {
			t.Fatal(err)
		}
		if h := mustAcquire(t, m, "old"); h.Token() != 42 {
			t.Fatalf("after another holder's tombstone of generation 41: token %d, want 42", h.Token())
		}
	})
}

// TestLoseAndReacquire: a lease lost for want of renewals keeps its
// record until the TTL (the manager's own Acquire waits like any
// observer's); getting the key again gives a new generation, the old
// handle's RunFenced is refused without running its work, and closing
// the old handle leaves the new record alone.
func TestLoseAndReacquire(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, inner store.Repository) {
		repo := newFaultRepo(inner, f.Clock)
		m, _ := newManager(t, f.Platform, repo)
		self, _ := f.Processes.Self()
		old := mustAcquire(t, m, "k")
		// The first renewal is still in flight, and then fails, when the
		// deadline passes: nothing renews the record after that.
		entered, proceed := make(chan struct{}), make(chan struct{})
		repo.during(func() { close(entered); <-proceed })
		repo.failNext(1)
		step(t, f.Clock, hb)
		receive(t, entered, "the renewal")
		advance(f.Clock, ttl-hb)
		wantLost(t, old)
		close(proceed)

		wantHeld(t, m, "k", self)
		advance(f.Clock, ttl)
		h := mustAcquire(t, m, "k")
		if h.Token() <= old.Token() {
			t.Fatalf("new token %d, old %d: want it larger", h.Token(), old.Token())
		}
		err := old.RunFenced(t.Context(), func(context.Context, lease.Token) error {
			t.Error("the old handle's fenced work ran")
			return nil
		})
		if !errors.Is(err, lease.ErrLost) {
			t.Fatalf("old RunFenced = %v, want ErrLost", err)
		}
		var got lease.Token
		if err := h.RunFenced(t.Context(), func(_ context.Context, tok lease.Token) error { got = tok; return nil }); err != nil || got != h.Token() {
			t.Fatalf("new RunFenced = %v with token %d, want nil with %d", err, got, h.Token())
		}
		if err := old.Close(); err != nil {
			t.Fatalf("closing the lost handle: %v", err)
		}
		if s := mustLoad(t, repo, "k").Snapshot; s.Generation != h.Token() || s.Released {
			t.Fatalf("closing the lost handle changed the successor's record: %+v", s)
		}
	})
}

// TestAcquireErrors: a failing repository makes Acquire return its
// *RepositoryError, a cancelled context its cause, and an invalid key a
// *KeyError; none of them leaves a record.
func TestAcquireErrors(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	m, _ := newManager(t, f.Platform, repo)

	repo.failNext(1)
	_, err := m.Acquire(t.Context(), "k")
	var re *store.RepositoryError
	if !errors.As(err, &re) || !errors.Is(err, repotest.ErrInjected) {
		t.Fatalf("Acquire with a failing save = %v, want the *RepositoryError", err)
	}
	repo.failLoads("bad")
	if _, err := m.Acquire(t.Context(), "bad"); !errors.As(err, &re) || re.Op != "load" {
		t.Fatalf("Acquire with a failing load = %v, want the *RepositoryError", err)
	}
	cause := errors.New("caller gave up")
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(cause)
	if _, err := m.Acquire(ctx, "k"); err != cause {
		t.Fatalf("Acquire with a cancelled context = %v, want its cause", err)
	}
	if _, err := m.Acquire(t.Context(), ""); !errors.Is(err, store.ErrInvalidKey) {
		t.Fatalf("Acquire(\"\") = %v, want ErrInvalidKey", err)
	}
	if _, ok, err := repo.Load(t.Context(), "k"); ok || err != nil {
		t.Fatalf("a failed Acquire left a record (%v)", err)
	}
	if h := mustAcquire(t, m, "k"); h.Token() != 1 {
		t.Fatalf("token %d after failed attempts, want 1", h.Token())
	}
}

// TestErrorsTyped: the failures callers see match their types and
// sentinels with errors.As and errors.Is, through wrapping.
func TestErrorsTyped(t *testing.T) {
	f := platformtest.New(t)
	repo := lease.NewMemoryRepository()
	holderID := f.Processes.Start()
	holder, _ := newManager(t, f.As(holderID), repo)
	m, _ := newManager(t, f.Platform, repo)
	mustAcquire(t, holder, "k")
	_, err := m.Acquire(t.Context(), "k")
	var held *lease.HeldError
	if !errors.As(wrap(err), &held) || !errors.Is(wrap(err), lease.ErrHeld) || !strings.Contains(err.Error(), holderID.String()) {
		t.Errorf("HeldError: %v", err)
	}
	if msg := (&lease.HeldError{Key: "k"}).Error(); msg != `lease: "k" is held` {
		t.Errorf("HeldError without a holder = %q", msg)
	}
	_, err = repo.Save(t.Context(), "k", store.Snapshot{Generation: 1, Holder: stranger, TTL: ttl}, 0)
	var conflict *store.RevisionConflictError
	if !errors.As(wrap(err), &conflict) || !errors.Is(wrap(err), store.ErrRevisionConflict) {
		t.Errorf("RevisionConflictError: %v", err)
	}
	_, err = lease.NewManager(lease.Config{})
	var ce *lease.ConfigError
	if !errors.As(wrap(err), &ce) {
		t.Errorf("ConfigError: %v", err)
	}
	if !errors.Is(wrap(lease.ErrLost), lease.ErrLost) || errors.Is(lease.ErrLost, lease.ErrReleased) || errors.Is(lease.ErrClosed, lease.ErrReleased) {
		t.Error("ErrLost, ErrReleased and ErrClosed do not match as sentinels")
	}
}

func wrap(err error) error { return errors.Join(errors.New("context"), err) }

// TestManagerClose: Close releases every lease (tombstones keep their
// generations), cancels fenced work with cause ErrReleased, stops the
// heartbeat and every timer, refuses later acquisitions, and is
// idempotent.
func TestManagerClose(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, inner store.Repository) {
		repo := newFaultRepo(inner, f.Clock)
		m, rec := newManager(t, f.Platform, repo)
		keys := []string{"a", "b", "c"}
		handles := make([]*lease.Lease, len(keys))
		for i, k := range keys {
			handles[i] = mustAcquire(t, m, k)
		}
		step(t, f.Clock, hb)
		rec.waitCount(t, lease.Renewed, len(keys))
		started, cause := make(chan struct{}), make(chan error, 1)
		go func() {
			_ = handles[0].RunFenced(context.Background(), func(ctx context.Context, _ lease.Token) error {
				close(started)
				<-ctx.Done()
				cause <- context.Cause(ctx)
				return nil
			})
		}()
		<-started
		if err := m.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := <-cause; !errors.Is(err, lease.ErrReleased) || !errors.Is(err, lease.ErrClosed) {
			t.Errorf("fenced work cancelled with %v, want ErrReleased", err)
		}
		for i, h := range handles {
			wantReleased(t, h)
			if s := mustLoad(t, repo, keys[i]).Snapshot; !s.Released || s.Generation != h.Token() {
				t.Errorf("%s after Close: %+v, want a tombstone of generation %d", keys[i], s, h.Token())
			}
		}
		if evs, _ := rec.of(lease.Released); len(evs) != len(keys) {
			t.Errorf("%d released events, want %d", len(evs), len(keys))
		}
		if n := f.Clock.Pending(); n != 0 {
			t.Errorf("%d timers pending after Close, want 0", n)
		}
		repo.log()
		advance(f.Clock, 10*ttl)
		if calls := repo.log(); len(calls) != 0 {
			t.Errorf("writes after Close: %+v", calls)
		}
		if h, err := m.Acquire(t.Context(), "d"); err != lease.ErrClosed {
			t.Errorf("Acquire after Close = %v, %v; want ErrClosed", h, err)
		}
		if _, ok, _ := repo.Load(t.Context(), "d"); ok {
			t.Error("Acquire after Close wrote a record")
		}
		if err := m.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// stuckLoads is a repository whose loads, once stuck is set, wait for
// unstick or their context, counting how many wait at once.
type stuckLoads struct {
	store.Repository
	mu      sync.Mutex
	stuck   bool
	waiting int
	changed chan struct{} // closed and replaced when waiting changes
	unstick chan struct{}
}

func (r *stuckLoads) Load(ctx context.Context, key string) (store.Record, bool, error) {
	r.mu.Lock()
	if !r.stuck {
		r.mu.Unlock()
		return r.Repository.Load(ctx, key)
	}
	r.waiting++
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.waiting--
		r.mu.Unlock()
	}()
	select {
	case <-r.unstick:
		return r.Repository.Load(ctx, key)
	case <-ctx.Done():
		return store.Record{}, false, ctx.Err()
	}
}

// TestManagerCloseReleasesAtOnce: Close releases its leases all at once,
// so that a store that does not answer holds it one TTL in all, not one
// per lease: every release's read waits on the store together.
func TestManagerCloseReleasesAtOnce(t *testing.T) {
	f := platformtest.New(t)
	repo := &stuckLoads{Repository: lease.NewMemoryRepository(), changed: make(chan struct{}), unstick: make(chan struct{})}
	m, rec := newManager(t, f.Platform, repo)
	keys := []string{"a", "b", "c", "d"}
	for _, k := range keys {
		mustAcquire(t, m, k)
	}
	repo.mu.Lock()
	repo.stuck = true
	repo.mu.Unlock()
	closed := make(chan error, 1)
	go func() { closed <- m.Close() }()
	timeout := time.After(waitLimit)
	for {
		repo.mu.Lock()
		n, changed := repo.waiting, repo.changed
		repo.mu.Unlock()
		if n == len(keys) {
			break
		}
		select {
		case <-changed:
		case <-timeout:
			close(repo.unstick)
			t.Fatalf("%d of %d releases wait on the store at once, after %v", n, len(keys), waitLimit)
		}
	}
	close(repo.unstick)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	rec.waitCount(t, lease.Released, len(keys))
}

// TestManagerCloseDuringAcquire: an acquisition that is writing its claim
// when Close begins does not leave a held lease behind. Either Close
// waits for it and releases it, or the acquisition fails; in both cases
// the record ends as a tombstone and no timer of the manager is left.
func TestManagerCloseDuringAcquire(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	m, _ := newManager(t, f.Platform, repo)
	entered, proceed := make(chan struct{}), make(chan struct{})
	repo.during(func() { close(entered); <-proceed })
	type result struct {
		h   *lease.Lease
		err error
	}
	acquired := make(chan result, 1)
	go func() {
		h, err := m.Acquire(context.Background(), "k")
		acquired <- result{h, err}
	}()
	<-entered
	closed := make(chan error, 1)
	go func() { closed <- m.Close() }()
	// Close has begun once it refuses acquisitions. A probe key whose
	// load fails tells without writing anything.
	repo.failLoads("probe")
	for {
		_, err := m.Acquire(context.Background(), "probe")
		if !errors.Is(err, repotest.ErrInjected) {
			if err != lease.ErrClosed {
				t.Fatalf("Acquire while closing = %v, want ErrClosed", err)
			}
			break
		}
	}
	close(proceed)
	res := <-acquired
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if res.err == nil {
		if err := res.h.Err(); !errors.Is(err, lease.ErrReleased) {
			t.Errorf("Acquire racing Close returned a lease whose Err() is %v; Close left it held", err)
		}
	}
	if rec, ok, _ := repo.Load(t.Context(), "k"); ok && !rec.Snapshot.Released {
		t.Errorf("record after Close: %+v, want a tombstone", rec.Snapshot)
	}
	if n := f.Clock.Pending(); n != 0 {
		t.Errorf("%d timers pending after Close, want 0", n)
	}
	if res.h != nil {
		_ = res.h.Close()
	}
}

// captureHandler is a slog handler that keeps every record.
type captureHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *captureHandler) WithGroup(string) slog.Handler            { return h }

func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}

// logLine is a captured record in a comparable form.
type logLine struct {
	level slog.Level
	msg   string
	attrs string
}

func (h *captureHandler) lines() []logLine {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []logLine
	for _, r := range h.records {
		var attrs []string
		r.Attrs(func(a slog.Attr) bool {
			attrs = append(attrs, a.String())
			return true
		})
		out = append(out, logLine{r.Level, r.Message, strings.Join(attrs, " ")})
	}
	return out
}

// TestEvents: a manager reports acquired, taken over, renewed, renewal
// failed, lost and released, in order, to OnEvent and to its logger,
// losses and failures as warnings.
func TestEvents(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	logs := &captureHandler{}
	m, rec := newManager(t, f.Platform, repo, func(c *lease.Config) { c.Logger = slog.New(logs) })
	dead := f.Processes.Start()
	if _, err := repo.Save(t.Context(), "k", store.Snapshot{Generation: 1, Holder: dead, TTL: ttl}, 0); err != nil {
		t.Fatal(err)
	}
	f.Processes.Kill(dead.PID)
	f.Processes.Reap(dead.PID)

	h := mustAcquire(t, m, "k") // taken over from the dead holder
	step(t, f.Clock, hb)
	rec.waitCount(t, lease.Renewed, 1)
	repo.failNext(1)
	step(t, f.Clock, hb)
	rec.waitCount(t, lease.RenewalFailed, 1)
	writeBehind(t, repo, "k", store.Snapshot{Generation: 3, Holder: stranger, TTL: ttl})
	step(t, f.Clock, hb)
	wantLost(t, h)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h2 := mustAcquire(t, m, "k2")
	if err := h2.Close(); err != nil {
		t.Fatal(err)
	}

	want := []lease.Event{
		{Kind: lease.Acquired, Key: "k", Token: 2},
		{Kind: lease.TakenOver, Key: "k", Token: 2, Previous: &dead, PreviousDead: true},
		{Kind: lease.Renewed, Key: "k", Token: 2},
		{Kind: lease.RenewalFailed, Key: "k", Token: 2},
		{Kind: lease.Lost, Key: "k", Token: 2},
		{Kind: lease.Acquired, Key: "k2", Token: 1},
		{Kind: lease.Released, Key: "k2", Token: 1},
	}
	got := rec.all()
	if len(got) != len(want) {
		t.Fatalf("events:\n%v\nwant\n%v", got, want)
	}
	for i, e := range got {
		w := want[i]
		samePrev := (e.Previous == nil) == (w.Previous == nil) && (e.Previous == nil || *e.Previous == *w.Previous)
		if e.Kind != w.Kind || e.Key != w.Key || e.Token != w.Token || !samePrev || e.PreviousDead != w.PreviousDead {
			t.Errorf("event %d = %+v, want %+v", i, e, w)
		}
		if wantErr := e.Kind == lease.RenewalFailed; wantErr != errors.Is(e.Err, repotest.ErrInjected) {
			t.Errorf("event %d (%v) Err = %v", i, e.Kind, e.Err)
		}
		if wantLoss := e.Kind == lease.Lost; wantLoss != errors.Is(e.Err, lease.ErrLost) {
			t.Errorf("event %d (%v) Err = %v, want a loss exactly for Lost", i, e.Kind, e.Err)
		}
	}
	loss := got[4].Err

	failure := (&store.RepositoryError{Op: "save", Key: "k", Err: repotest.ErrInjected}).Error()
	wantLogs := []logLine{
		{slog.LevelDebug, "lease acquired", "key=k token=2"},
		{slog.LevelDebug, "lease taken over", "key=k token=2 previous=" + dead.String() + " previous_dead=true"},
		{slog.LevelDebug, "lease renewed", "key=k token=2"},
		{slog.LevelWarn, "lease renewal failed", "key=k token=2 err=" + failure},
		{slog.LevelWarn, "lease lost", "key=k token=2 err=" + loss.Error()},
		{slog.LevelDebug, "lease acquired", "key=k2 token=1"},
		{slog.LevelDebug, "lease released", "key=k2 token=1"},
	}
	gotLogs := logs.lines()
	if len(gotLogs) != len(wantLogs) {
		t.Fatalf("log:\n%v\nwant\n%v", gotLogs, wantLogs)
	}
	for i := range gotLogs {
		if gotLogs[i] != wantLogs[i] {
			t.Errorf("log line %d = %+v, want %+v", i, gotLogs[i], wantLogs[i])
		}
	}
}

// TestEventKindString names every kind, and an unknown one by number.
func TestEventKindString(t *testing.T) {
	want := map[lease.EventKind]string{lease.Acquired: "acquired", lease.TakenOver: "taken over", lease.Renewed: "renewed",
		lease.RenewalFailed: "renewal failed", lease.Lost: "lost", lease.Released: "released", 0: "EventKind(0)", 99: "EventKind(99)"}
	for k, s := range want {
		if k.String() != s {
			t.Errorf("EventKind(%d).String() = %q, want %q", uint8(k), k.String(), s)
		}
	}
}

// TestCloseReleaseFailure: a release whose tombstone cannot be written
// still ends the handle, and Close (of the lease, and of the manager)
// returns the *RepositoryError; the record stays for observers to judge.
func TestCloseReleaseFailure(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	m, _ := newManager(t, f.Platform, repo)
	a, b := mustAcquire(t, m, "a"), mustAcquire(t, m, "b")
	repo.failNext(-1)
	var re *store.RepositoryError
	if err := a.Close(); !errors.As(err, &re) || !errors.Is(err, repotest.ErrInjected) {
		t.Fatalf("Close with a failing repository = %v, want the *RepositoryError", err)
	}
	wantReleased(t, a)
	if err := m.Close(); !errors.As(err, &re) {
		t.Fatalf("Manager.Close with a failing repository = %v, want the *RepositoryError", err)
	}
	wantReleased(t, b)
	for _, k := range []string{"a", "b"} {
		if s := mustLoad(t, repo, k).Snapshot; s.Released {
			t.Errorf("%s: a tombstone was written though every save failed", k)
		}
	}
}

// TestCloseAfterALateRenewal: a renewal of this holder that the manager
// gave up on can still land in the store afterwards (a PostgreSQL commit
// whose client timed out), between Close's read and its tombstone. The
// tombstone then meets a revision conflict from the holder's own write:
// Close must read again and release, not take the conflict for a
// successor's and leave the key held until its TTL runs out.
func TestCloseAfterALateRenewal(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	m, _ := newManager(t, f.Platform, repo)
	h := mustAcquire(t, m, "k")
	held := mustLoad(t, repo, "k").Snapshot
	repo.during(func() { writeBehind(t, repo.Repository, "k", held) }) // the late renewal
	if err := h.Close(); err != nil {
		t.Fatalf("Close after a late renewal = %v", err)
	}
	wantReleased(t, h)
	if s := mustLoad(t, repo, "k").Snapshot; !s.Released || s.Generation != h.Token() {
		t.Fatalf("after Close the record is %+v; want a tombstone of generation %d", s, h.Token())
	}
	if h2 := mustAcquire(t, m, "k"); h2.Token() != h.Token()+1 {
		t.Fatalf("the next Acquire got token %d, want %d", h2.Token(), h.Token()+1)
	}
}

// TestGenerationNeverWraps: a key whose generation has reached the
// largest token cannot be acquired again, since the next token would go
// back to zero; Acquire fails and writes nothing.
func TestGenerationNeverWraps(t *testing.T) {
	f := platformtest.New(t)
	repo := lease.NewMemoryRepository()
	m, _ := newManager(t, f.Platform, repo)
	last := ^lease.Token(0)
	rev, err := repo.Save(t.Context(), "k", store.Snapshot{Generation: last, Holder: stranger, Released: true, TTL: ttl}, 0)
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.Acquire(t.Context(), "k")
	if err == nil {
		t.Fatalf("Acquire after generation %d returned token %d", last, h.Token())
	}
	if r := mustLoad(t, repo, "k"); r.Revision != rev {
		t.Fatalf("a failed Acquire wrote %+v", r)
	}
}

// forgetfulRepo is a memory repository that drops a record once it is a
// tombstone, so that a manager's own memory per key can be measured.
type forgetfulRepo struct{ *lease.MemoryRepository }

func (r forgetfulRepo) Load(ctx context.Context, key string) (store.Record, bool, error) {
	rec, ok, err := r.MemoryRepository.Load(ctx, key)
	if ok && rec.Snapshot.Released {
		return store.Record{}, false, err
	}
	return rec, ok, err
}

// TestManagerForgetsKeys: a manager keeps nothing per key once its
// leases are released; memory does not grow with the number of keys it
// has held (kubernetes#138743).
func TestManagerForgetsKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("acquires many keys")
	}
	f := platformtest.New(t)
	repo := forgetfulRepo{lease.NewMemoryRepository()}
	m, _ := newManager(t, f.Platform, repo, func(c *lease.Config) { c.OnEvent = nil })
	cycle := func(prefix string, n int) {
		for i := range n {
			h := mustAcquire(t, m, fmt.Sprintf("%s-%07d", prefix, i))
			if err := h.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	const keys = 20000
	cycle("warm", 100)
	before := heap()
	cycle("key", keys)
	repoBytes := heap() - before // the repository keeps its tombstones
	before = heap()
	probe := lease.NewMemoryRepository()
	for i := range keys {
		s := store.Snapshot{Generation: 1, Holder: stranger, Released: true, TTL: ttl}
		if _, err := probe.Save(t.Context(), fmt.Sprintf("key-%07d", i), s, 0); err != nil {
			t.Fatal(err)
		}
	}
	tombstones := heap() - before
	runtime.KeepAlive(probe)
	if perKey := (int64(repoBytes) - int64(tombstones)) / keys; perKey > 16 {
		t.Errorf("the manager keeps about %d bytes per key it has released", perKey)
	}
}

// TestSlowCloseDeclaresLoss: the deadline stays armed while Close reads
// and writes, so a Close slower than the TTL still declares the lease
// lost at the deadline, and cancels fenced work with cause ErrLost,
// before an observer may take over. Close then finishes its tombstone.
func TestSlowCloseDeclaresLoss(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	m, rec := newManager(t, f.Platform, repo)
	h := mustAcquire(t, m, "k")
	t0 := f.Clock.Monotonic()
	started, cause := make(chan struct{}), make(chan error, 1)
	fenced := runFencedAsync(t.Context(), h, func(ctx context.Context, _ lease.Token) error {
		close(started)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return nil
	})
	receive(t, started, "the fenced work")
	// Close begins half a heartbeat in, so that its own bound (a TTL on
	// the manager's clock) ends after the deadline.
	step(t, f.Clock, hb/2)
	entered, proceed := make(chan struct{}), make(chan struct{})
	repo.during(func() { close(entered); <-proceed })
	closed := make(chan error, 1)
	go func() { closed <- h.Close() }()
	receive(t, entered, "Close's tombstone")
	advance(f.Clock, ttl-hb/2-time.Nanosecond)
	settle(t, f.Clock) // the deadline is still armed
	wantNotEnded(t, h)
	advance(f.Clock, time.Nanosecond)
	wantLost(t, h)
	c := receive(t, cause, "the fenced work's context")
	if loss, ok := errors.AsType[*lease.LossError](c); !ok || loss.Cause != lease.LostDeadline || loss.FailedRenewals != 0 {
		close(proceed)
		t.Fatalf("fenced work cancelled with %v, want a loss at the deadline with no renewal failed", c)
	}
	if _, at := rec.waitCount(t, lease.Lost, 1); at[0] != t0+ttl {
		t.Fatalf("lost %v after acquisition, want the TTL", at[0]-t0)
	}
	close(proceed)
	if err := receive(t, closed, "Close"); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if err := receive(t, fenced, "RunFenced"); err != nil {
		t.Fatalf("RunFenced = %v, want the work's nil", err)
	}
	if err := h.Err(); err != c {
		t.Fatalf("Err() after Close = %v, want the loss %v", err, c)
	}
	if evs, _ := rec.of(lease.Released); len(evs) != 0 {
		t.Fatalf("released events for a lease lost during Close: %+v", evs)
	}
	if s := mustLoad(t, repo, "k").Snapshot; !s.Released || s.Generation != h.Token() {
		t.Fatalf("record after Close: %+v, want this generation's tombstone", s)
	}
	settle(t, f.Clock) // the loop lets go of the timer of Close's bound
	if n := f.Clock.Pending(); n != 0 {
		t.Fatalf("%d timers pending after Close", n)
	}
}
