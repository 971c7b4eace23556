package lanes

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rivus/collab/platform/platformtest"
)

// metricsLog is a Metrics that records what it hears: the gauges' sums,
// the counts, and the durations in the order observed.
type metricsLog struct {
	mu       sync.Mutex
	depth    int
	running  int
	wakes    map[string]int
	waited   []time.Duration
	ran      []time.Duration
	dropped  int
	timedOut int
}

func (m *metricsLog) AddDepth(d int) { m.mu.Lock(); m.depth += d; m.mu.Unlock() }

func (m *metricsLog) AddRunning(d int) { m.mu.Lock(); m.running += d; m.mu.Unlock() }

func (m *metricsLog) Woke(r WakeResult, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.wakes == nil {
		m.wakes = map[string]int{}
	}
	m.wakes[wakeLabel(r, err)]++
}

func (m *metricsLog) Waited(d time.Duration) {
	m.mu.Lock()
	m.waited = append(m.waited, d)
	m.mu.Unlock()
}

func (m *metricsLog) Ran(d time.Duration) { m.mu.Lock(); m.ran = append(m.ran, d); m.mu.Unlock() }

func (m *metricsLog) Dropped() { m.mu.Lock(); m.dropped++; m.mu.Unlock() }

func (m *metricsLog) TimedOut() { m.mu.Lock(); m.timedOut++; m.mu.Unlock() }

// wakeLabel names a Wake's answer as a metric's label would.
func wakeLabel(r WakeResult, err error) string {
	switch {
	case errors.Is(err, ErrQueueFull):
		return "queue full"
	case errors.Is(err, ErrClosed):
		return "closed"
	case err != nil:
		return err.Error()
	}
	return r.String()
}

// gauges checks the depth and the activations running.
func (m *metricsLog) gauges(t *testing.T, when string, depth, running int) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.depth != depth || m.running != running {
		t.Errorf("%s: depth %d, running %d; want %d, %d", when, m.depth, m.running, depth, running)
	}
}

// longest checks LongestRunning.
func longest[K comparable](t *testing.T, l *Lanes[K], when string, want time.Duration) {
	t.Helper()
	if got := l.LongestRunning(); got != want {
		t.Errorf("%s: LongestRunning = %v, want %v", when, got, want)
	}
}

// The depth counts the follow-ups owed by running lanes, as MaxQueued
// does: with MaxQueued 1, the wake refused for want of a place finds the
// depth at 1, for Metrics and Hooks.QueueDepth alike.
func TestDepthCountsOwedFollowUps(t *testing.T) {
	g := newGate[string]()
	var (
		m      metricsLog
		hooked hookLog
	)
	cfg := g.config(1, 1)
	cfg.Metrics = &m
	cfg.Hooks.QueueDepth = func(n int) { hooked.add("depth %d", n) }
	l := newLanes(t, cfg)

	wakeWant(t, l, "a", Started)
	g.nextStart(t, "a")
	wakeWant(t, l, "a", Queued) // owed: takes the only place
	m.gauges(t, "a owes a follow-up", 1, 1)
	wakeWant(t, l, "b", ErrQueueFull)
	m.gauges(t, "b refused", 1, 1)
	g.release("a")
	g.nextExit(t, "a")
	g.nextStart(t, "a") // the follow-up starts at once: nobody waits
	m.gauges(t, "the follow-up runs", 0, 1)
	g.release("a")
	g.nextExit(t, "a")
	l.Close()
	m.gauges(t, "after Close", 0, 0)
	if got, want := hooked.get(), []string{"depth 1", "depth 0"}; !slices.Equal(got, want) {
		t.Errorf("Hooks.QueueDepth heard %q, want %q", got, want)
	}
}

// Each metric on one run, on a fake clock and one slot, where every
// step is ordered by what the test waits for:
//
//	t=0   a starts; b waits
//	t=2s  a owes a follow-up; c is refused (MaxQueued 2); b coalesces
//	t=5s  a ends (ran 5s): its follow-up waits behind b, which starts (waited 5s)
//	t=65s b times out (ran 60s); a starts (waited 60s) and owes again; d waits
//	t=66s Cancel(a) drops a's owed wake; a ends (ran 1s); d starts (waited 1s)
//	t=68s a waits; Close drops it, interrupts d (ran 2s); e is refused
func TestMetrics(t *testing.T) {
	clock := platformtest.NewClock()
	g := newGate[string]()
	var (
		m      metricsLog
		hooked hookLog
	)
	cfg := g.config(1, 2)
	cfg.Clock = clock
	cfg.TurnTimeout = time.Minute
	cfg.Metrics = &m
	cfg.Hooks.QueueDepth = func(n int) { hooked.add("depth %d", n) }
	l := newLanes(t, cfg)
	longest(t, l, "before any activation", 0)

	wakeWant(t, l, "a", Started)
	g.nextStart(t, "a")
	m.gauges(t, "a runs", 0, 1)
	wakeWant(t, l, "b", Queued)
	clock.Advance(2 * time.Second)
	longest(t, l, "a ran 2s", 2*time.Second)
	wakeWant(t, l, "a", Queued)
	wakeWant(t, l, "c", ErrQueueFull)
	wakeWant(t, l, "b", Coalesced)
	m.gauges(t, "b waits, a owes", 2, 1)

	clock.Advance(3 * time.Second)
	g.release("a")
	g.nextExit(t, "a")
	g.nextStart(t, "b")
	m.gauges(t, "b runs, a waits", 1, 1)
	longest(t, l, "b just started", 0)

	clock.Advance(time.Minute)
	if e := g.nextExit(t, "b"); e != (Interrupted{Started: true, Cause: ErrTurnTimeout}) {
		t.Fatalf("b's exit = %v, want its turn timeout", e)
	}
	g.nextStart(t, "a")
	m.gauges(t, "a runs again", 0, 1)
	wakeWant(t, l, "a", Queued)
	wakeWant(t, l, "d", Queued)
	m.gauges(t, "a owes, d waits", 2, 1)

	clock.Advance(time.Second)
	if err := l.Cancel(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	g.nextStart(t, "d")
	m.gauges(t, "d runs", 0, 1)

	clock.Advance(2 * time.Second)
	longest(t, l, "d ran 2s", 2*time.Second)
	wakeWant(t, l, "a", Queued)
	l.Close()
	wakeWant(t, l, "e", ErrClosed)
	m.gauges(t, "after Close", 0, 0)
	longest(t, l, "after Close", 0)

	m.mu.Lock()
	defer m.mu.Unlock()
	wantWakes := map[string]int{"started": 1, "queued": 5, "coalesced": 1, "queue full": 1, "closed": 1}
	if !maps.Equal(m.wakes, wantWakes) {
		t.Errorf("wakes %v, want %v", m.wakes, wantWakes)
	}
	s := time.Second
	if want := []time.Duration{0, 5 * s, 60 * s, 1 * s}; !slices.Equal(m.waited, want) {
		t.Errorf("waited %v, want %v", m.waited, want)
	}
	if want := []time.Duration{5 * s, 60 * s, 1 * s, 2 * s}; !slices.Equal(m.ran, want) {
		t.Errorf("ran %v, want %v", m.ran, want)
	}
	if m.dropped != 2 || m.timedOut != 1 {
		t.Errorf("%d dropped, %d timed out; want 2, 1", m.dropped, m.timedOut)
	}
	// Hooks.QueueDepth hears the same depth, after each step that changed it.
	want := []string{"depth 1", "depth 2", "depth 1", "depth 0", "depth 1", "depth 2", "depth 1", "depth 0", "depth 1", "depth 0"}
	if got := hooked.get(); !slices.Equal(got, want) {
		t.Errorf("Hooks.QueueDepth heard %q, want %q", got, want)
	}
}

// Without Config.Metrics, LongestRunning has nothing to read: the lanes
// do not time their activations.
func TestLongestRunningNeedsMetrics(t *testing.T) {
	clock := platformtest.NewClock()
	g := newGate[string]()
	cfg := g.config(1, 0)
	cfg.Clock = clock
	l := newLanes(t, cfg)
	wakeWant(t, l, "a", Started)
	g.nextStart(t, "a")
	clock.Advance(time.Minute)
	longest(t, l, "a ran 1m without Metrics", 0)
}

// Activations that end out of their start order leave the longest
// running one at the head: LongestRunning follows the oldest still
// running.
func TestLongestRunningFollowsTheOldest(t *testing.T) {
	clock := platformtest.NewClock()
	g := newGate[string]()
	cfg := g.config(3, 0)
	cfg.Clock = clock
	cfg.Metrics = new(metricsLog)
	l := newLanes(t, cfg)
	for _, key := range []string{"a", "b", "c"} {
		wakeWant(t, l, key, Started)
		g.nextStart(t, key)
		clock.Advance(time.Second)
	}
	longest(t, l, "a, b, c run", 3*time.Second)
	g.release("b")
	g.nextExit(t, "b")
	g.release("a")
	g.nextExit(t, "a")
	// c is the oldest left; OnExit ran, but a's slot may not have passed
	// on yet: Cancel returns once it has.
	if err := l.Cancel(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if err := l.Cancel(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	longest(t, l, "c runs alone", time.Second)
}

// nopMetrics is a Metrics that does nothing: with it, an allocation
// measured is the lanes' own.
type nopMetrics struct{}

func (*nopMetrics) AddDepth(int)           {}
func (*nopMetrics) AddRunning(int)         {}
func (*nopMetrics) Woke(WakeResult, error) {}
func (*nopMetrics) Waited(time.Duration)   {}
func (*nopMetrics) Ran(time.Duration)      {}
func (*nopMetrics) Dropped()               {}
func (*nopMetrics) TimedOut()              {}

// wakeAllocs is what a wake allocates, on average: one that starts no
// activation (a coalesced wake of a busy key and one refused for want of
// a queue place), and one whose activation runs and ends.
func wakeAllocs(t *testing.T, m Metrics) (noStart, cycle float64) {
	t.Helper()
	release := make(chan struct{})
	l := newLanes(t, Config[int]{
		MaxConcurrent: 1,
		MaxQueued:     1,
		Metrics:       m,
		Activate: func(ctx context.Context, key int) error {
			if key == 0 {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return nil
		},
	})
	wakeWant(t, l, 0, Started)
	wakeWant(t, l, 0, Queued)
	noStart = testing.AllocsPerRun(1000, func() {
		if r, _ := l.Wake(0); r != Coalesced {
			t.Fatalf("Wake(0) = %v, want Coalesced", r)
		}
		if _, err := l.Wake(1); err != ErrQueueFull {
			t.Fatalf("Wake(1) = %v, want ErrQueueFull", err)
		}
	})
	close(release)
	// Every wake below is done when Wait is called, so no Add races it:
	// it returns once the activation, and its lane's step past it, ended.
	l.activations.Wait()
	cycle = testing.AllocsPerRun(1000, func() {
		if r, _ := l.Wake(1); r != Started {
			t.Fatalf("Wake(1) = %v, want Started", r)
		}
		l.activations.Wait()
	})
	return noStart, cycle
}

// Metrics cost no allocation, set or not: unset, a wake that starts no
// activation allocates nothing, and a wake with its activation allocates
// only what the activation needs with or without metrics (its context and
// its goroutine's start; see doc.go), so with Metrics set as without.
func TestMetricsAllocations(t *testing.T) {
	noStart, cycle := wakeAllocs(t, nil)
	if noStart != 0 {
		t.Errorf("Metrics unset: a wake that starts nothing allocates %v times, want 0", noStart)
	}
	if cycle > 2 {
		t.Errorf("Metrics unset: a wake and its activation allocate %v times, want at most 2 (context, goroutine)", cycle)
	}
	setNoStart, setCycle := wakeAllocs(t, new(nopMetrics))
	if setNoStart != noStart || setCycle != cycle {
		t.Errorf("Metrics set: %v and %v allocations, want %v and %v as unset", setNoStart, setCycle, noStart, cycle)
	}
	t.Logf("allocations: a wake that starts nothing %v, a wake and its activation %v", noStart, cycle)
}
