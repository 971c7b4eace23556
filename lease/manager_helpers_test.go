package lease_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/internal/repotest"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
)

// The timing of the managers under test: TTL is four heartbeats, so that
// a holder has room to retry failed renewals before it is lost.
const (
	ttl = 4 * time.Second
	hb  = time.Second
)

// waitLimit bounds every wait of a test for something the code under test
// does in its own goroutines; reaching it is a failure, not a pacing.
const waitLimit = 30 * time.Second

// allKinds are the repositories the key manager tests run against.
var allKinds = []string{"memory", "sqlite", "file"}

// openRepo opens a repository of kind on f, closed at the end of the test.
func openRepo(t *testing.T, f *platformtest.Fake, kind string) store.Repository {
	t.Helper()
	if kind == "memory" {
		return lease.NewMemoryRepository()
	}
	return openFake(t, f, kind)
}

// forKinds runs test once for every repository kind.
func forKinds(t *testing.T, test func(t *testing.T, f *platformtest.Fake, repo store.Repository)) {
	for _, kind := range allKinds {
		t.Run(kind, func(t *testing.T) {
			f := platformtest.New(t)
			test(t, f, openRepo(t, f, kind))
		})
	}
}

// recorder keeps the events a manager reports, with the time of each on
// the manager's fake clock, for tests to wait on.
type recorder struct {
	clock *platformtest.Clock // nil when the manager has another clock

	mu      sync.Mutex
	events  []lease.Event
	at      []time.Duration
	changed chan struct{} // closed and replaced on every event
}

func newRecorder(clock *platformtest.Clock) *recorder {
	return &recorder{clock: clock, changed: make(chan struct{})}
}

// on is the manager's OnEvent: it runs under the manager's lock, so it
// only appends and wakes waiters.
func (r *recorder) on(e lease.Event) {
	var at time.Duration
	if r.clock != nil {
		at = r.clock.Monotonic()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	r.at = append(r.at, at)
	close(r.changed)
	r.changed = make(chan struct{})
}

// all returns the events so far.
func (r *recorder) all() []lease.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]lease.Event(nil), r.events...)
}

// of returns the events of kind so far and when each was reported.
func (r *recorder) of(kind lease.EventKind) ([]lease.Event, []time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var evs []lease.Event
	var at []time.Duration
	for i, e := range r.events {
		if e.Kind == kind {
			evs = append(evs, e)
			at = append(at, r.at[i])
		}
	}
	return evs, at
}

// waitCount waits until n events of kind have been reported, and returns
// them with their times.
func (r *recorder) waitCount(t *testing.T, kind lease.EventKind, n int) ([]lease.Event, []time.Duration) {
	t.Helper()
	var (
		evs []lease.Event
		at  []time.Duration
	)
	r.waitUntil(t, fmt.Sprintf("%d %q events", n, kind), func() bool {
		evs, at = r.of(kind)
		return len(evs) >= n
	})
	return evs, at
}

// waitUntil waits until done, which reads the events, reports true.
func (r *recorder) waitUntil(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		changed := r.changed
		r.mu.Unlock()
		if done() {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("waited %v for %s; all events: %v", waitLimit, what, r.all())
		}
	}
}

// readingClock is the clock a manager under test sees: the fake clock,
// except that a new timer's duration counts from the reading the manager
// last took rather than from the moment it creates the timer. The
// manager computes a timer from a reading (the next renewal minus now)
// and creates it a moment later; a real clock moves nanoseconds in that
// moment, but a test advancing the fake clock then would delay the timer
// by the whole advance, and a tick the test waits for would never come.
// Tests advance the clock with advance, which excludes the creation of
// timers.
type readingClock struct {
	*platformtest.Clock
	advancing *sync.RWMutex // the clock's, shared with advance

	mu   sync.Mutex
	last time.Duration // the last reading returned to this manager
}

// advanceLocks holds each fake clock's lock against timer creation.
var advanceLocks sync.Map // *platformtest.Clock → *sync.RWMutex

func advanceLock(c *platformtest.Clock) *sync.RWMutex {
	l, _ := advanceLocks.LoadOrStore(c, new(sync.RWMutex))
	return l.(*sync.RWMutex)
}

// advance moves c by d while no manager creates a timer on it.
func advance(c *platformtest.Clock, d time.Duration) {
	l := advanceLock(c)
	l.Lock()
	defer l.Unlock()
	c.Advance(d)
}

func newReadingClock(c *platformtest.Clock) *readingClock {
	return &readingClock{Clock: c, advancing: advanceLock(c), last: c.Monotonic()}
}

func (c *readingClock) Monotonic() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = c.Clock.Monotonic()
	return c.last
}

// sinceReading is how far the clock has moved since the last reading;
// the caller holds c.advancing, so that it stays so until the timer is
// created.
func (c *readingClock) sinceReading() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Clock.Monotonic() - c.last
}

func (c *readingClock) NewTimer(d time.Duration) platform.Timer {
	c.advancing.RLock()
	defer c.advancing.RUnlock()
	return c.Clock.NewTimer(d - c.sinceReading())
}

func (c *readingClock) AfterFunc(d time.Duration, f func()) platform.Timer {
	c.advancing.RLock()
	defer c.advancing.RUnlock()
	return c.Clock.AfterFunc(d-c.sinceReading(), f)
}

// newManager starts a manager on p and repo with the test timing and a
// recorder, closed at the end of the test. edit changes the config.
func newManager(t *testing.T, p *platform.Platform, repo store.Repository, edit ...func(*lease.Config)) (*lease.Manager, *recorder) {
	t.Helper()
	clock, _ := p.Clock.(*platformtest.Clock)
	rec := newRecorder(clock)
	if clock != nil {
		own := *p
		own.Clock = newReadingClock(clock)
		p = &own
	}
	cfg := lease.Config{TTL: ttl, Heartbeat: hb, Repository: repo, Platform: p, OnEvent: rec.on}
	for _, e := range edit {
		e(&cfg)
	}
	m, err := lease.NewManager(cfg)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	if clock != nil {
		track(t, clock, m)
	}
	return m, rec
}

// frozen returns a platform that plays the process id on f's process
// table with a clock of its own, which the test never advances: a holder
// on it stops renewing while it stays alive.
func frozen(f *platformtest.Fake, id platform.Identity) *platform.Platform {
	p := f.As(id)
	p.Clock = platformtest.NewClock()
	return p
}

// managersOn tracks the managers of each fake clock, so that settle
// knows whom to wait for.
var managersOn = struct {
	sync.Mutex
	m map[*platformtest.Clock][]*lease.Manager
}{m: map[*platformtest.Clock][]*lease.Manager{}}

// track makes settle on clock wait for m too, until the test ends.
func track(t *testing.T, clock *platformtest.Clock, m *lease.Manager) {
	managersOn.Lock()
	defer managersOn.Unlock()
	managersOn.m[clock] = append(managersOn.m[clock], m)
	t.Cleanup(func() {
		managersOn.Lock()
		defer managersOn.Unlock()
		delete(managersOn.m, clock)
	})
}

// settle waits until every manager on clock has done all that is due by
// its reading now: deadlines fired, renewals written and answered,
// events reported. Advancing the clock after it fires exactly what falls
// due then.
func settle(t *testing.T, clock *platformtest.Clock) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	managersOn.Lock()
	ms := slices.Clone(managersOn.m[clock])
	managersOn.Unlock()
	for _, m := range ms {
		if err := lease.Settle(ctx, m); err != nil {
			t.Fatalf("waiting for a manager to settle: %v", err)
		}
	}
}

// step settles the managers on clock and advances it by d.
func step(t *testing.T, clock *platformtest.Clock, d time.Duration) {
	t.Helper()
	settle(t, clock)
	advance(clock, d)
}

func mustAcquire(t *testing.T, m *lease.Manager, key string) *lease.Lease {
	t.Helper()
	h, err := m.Acquire(t.Context(), key)
	if err != nil {
		t.Fatalf("Acquire(%q): %v", key, err)
	}
	return h
}

// wantHeld checks that Acquire of key fails with a *HeldError naming
// holder.
func wantHeld(t *testing.T, m *lease.Manager, key string, holder platform.Identity) {
	t.Helper()
	h, err := m.Acquire(t.Context(), key)
	var held *lease.HeldError
	if !errors.As(err, &held) || !errors.Is(err, lease.ErrHeld) {
		if h != nil {
			_ = h.Close()
		}
		t.Fatalf("Acquire(%q) = %v, want a *HeldError", key, err)
	}
	if held.Key != key || held.Holder == nil || *held.Holder != holder {
		t.Fatalf("HeldError = %+v, want key %q held by %v", held, key, holder)
	}
}

func mustLoad(t *testing.T, repo store.Repository, key string) store.Record {
	t.Helper()
	rec, ok, err := repo.Load(t.Context(), key)
	if err != nil || !ok {
		t.Fatalf("Load(%q) = %+v, %v, %v; want a record", key, rec, ok, err)
	}
	return rec
}

// writeBehind overwrites key's record behind the managers' backs, as
// another writer would, and returns the new revision.
func writeBehind(t *testing.T, repo store.Repository, key string, s store.Snapshot) store.Revision {
	t.Helper()
	rec, _, err := repo.Load(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := repo.Save(t.Context(), key, s, rec.Revision)
	if err != nil {
		t.Fatalf("Save behind the manager's back: %v", err)
	}
	// This process saw the write: a later save over an older revision
	// that succeeds breaks the store's contract, which the monitor checks.
	lease.StoreSeen(repo, key, rev)
	return rev
}

// stranger is a holder in another process table (another boot), which
// only the TTL can judge.
var stranger = platform.Identity{Host: "elsewhere", BootID: "boot-elsewhere", PID: 77, StartTime: 4242, PIDNamespace: 4026531836}

// wantLost waits until h is lost, and checks how it reports it.
func wantLost(t *testing.T, h *lease.Lease) {
	t.Helper()
	select {
	case <-h.Lost():
	case <-time.After(waitLimit):
		t.Fatalf("lease %q not lost after %v", h.Key(), waitLimit)
	}
	if err := h.Err(); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("Err() = %v, want ErrLost", err)
	}
}

// wantReleased checks that h has been released.
func wantReleased(t *testing.T, h *lease.Lease) {
	t.Helper()
	select {
	case <-h.Lost():
	default:
		t.Fatalf("lease %q: Lost() not closed after release", h.Key())
	}
	if err := h.Err(); !errors.Is(err, lease.ErrReleased) {
		t.Fatalf("lease %q: Err() = %v, want ErrReleased", h.Key(), err)
	}
}

// wantNotEnded checks that h has neither been lost nor released.
func wantNotEnded(t *testing.T, h *lease.Lease) {
	t.Helper()
	select {
	case <-h.Lost():
		t.Fatalf("lease %q ended: %v", h.Key(), h.Err())
	default:
	}
	if err := h.Err(); err != nil {
		t.Fatalf("Err() = %v, want nil", err)
	}
}

// saveCall is one write a faultRepo saw: a Save, or a whole SaveBatch.
type saveCall struct {
	keys  []string
	batch bool
	at    time.Duration // the fake clock when the write began
}

// faultRepo wraps a repository: it logs the writes, fails them (or the
// loads of one key) on demand, and lets a test run a hook inside the next
// write. It is not a BatchSaver; batchRepo is.
type faultRepo struct {
	store.Repository
	clock *platformtest.Clock
	fence chan string // receives the key of every Fence call, if not full

	mu        sync.Mutex
	calls     []saveCall
	failSaves int    // how many more writes fail; negative: all
	failLoad  string // Load of this key fails
	hook      func() // runs inside the next write, once
}

func newFaultRepo(repo store.Repository, clock *platformtest.Clock) *faultRepo {
	return &faultRepo{Repository: repo, clock: clock, fence: make(chan string, 64)}
}

// failNext makes the next n writes fail; n < 0 fails all until failNext(0).
func (r *faultRepo) failNext(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failSaves = n
}

// failLoads makes every Load of key fail.
func (r *faultRepo) failLoads(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failLoad = key
}

// during runs hook inside the next write, before it reaches the repository.
func (r *faultRepo) during(hook func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hook = hook
}

// log returns the writes so far and forgets them.
func (r *faultRepo) log() []saveCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := r.calls
	r.calls = nil
	return calls
}

// begin logs a write of keys and says whether it fails.
func (r *faultRepo) begin(keys []string, batch bool) error {
	r.mu.Lock()
	hook := r.hook
	r.hook = nil
	r.calls = append(r.calls, saveCall{keys: keys, batch: batch, at: r.clock.Monotonic()})
	fail := r.failSaves != 0
	if r.failSaves > 0 {
		r.failSaves--
	}
	r.mu.Unlock()
	if hook != nil {
		hook()
	}
	if fail {
		return repotest.ErrInjected
	}
	return nil
}

func (r *faultRepo) Save(ctx context.Context, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	if err := r.begin([]string{key}, false); err != nil {
		return 0, &store.RepositoryError{Op: "save", Key: key, Err: err}
	}
	return r.Repository.Save(ctx, key, s, expected)
}

func (r *faultRepo) Load(ctx context.Context, key string) (store.Record, bool, error) {
	r.mu.Lock()
	fail := r.failLoad == key
	r.mu.Unlock()
	if fail {
		return store.Record{}, false, &store.RepositoryError{Op: "load", Key: key, Err: repotest.ErrInjected}
	}
	return r.Repository.Load(ctx, key)
}

func (r *faultRepo) Fence(ctx context.Context, key string) (func(), error) {
	select {
	case r.fence <- key:
	default:
	}
	return r.Repository.Fence(ctx, key)
}

// batchRepo is a faultRepo over a BatchSaver, and a BatchSaver itself.
type batchRepo struct{ *faultRepo }

func (r batchRepo) SaveBatch(ctx context.Context, writes []store.Write) ([]store.Revision, []error) {
	keys := make([]string, len(writes))
	for i, w := range writes {
		keys[i] = w.Key
	}
	if err := r.begin(keys, true); err != nil {
		errs := make([]error, len(writes))
		for i := range errs {
			errs[i] = &store.RepositoryError{Op: "save batch", Err: err}
		}
		return make([]store.Revision, len(writes)), errs
	}
	return r.Repository.(store.BatchSaver).SaveBatch(ctx, writes)
}
