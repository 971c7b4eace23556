package lanes

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rivus/collab/fsm"
)

// patience bounds every wait of a test for something the lanes must do.
// It only turns a hang into a failure; no test sleeps to let things
// happen.
const patience = 10 * time.Second

// gate is an Activate and an OnExit that let a test drive activations by
// hand: each activation reports its start and then returns nil when the
// test releases its key, or the cause when the lanes interrupt it.
type gate[K comparable] struct {
	starts chan started[K]
	exits  chan exited[K]

	mu     sync.Mutex
	tokens map[K]chan struct{}
}

// started is an activation that began.
type started[K comparable] struct {
	key K
	ctx context.Context
}

// exited is what OnExit heard.
type exited[K comparable] struct {
	key  K
	exit Exit
}

func newGate[K comparable]() *gate[K] {
	return &gate[K]{
		starts: make(chan started[K], 1024),
		exits:  make(chan exited[K], 1024),
		tokens: map[K]chan struct{}{},
	}
}

func (g *gate[K]) token(key K) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch, ok := g.tokens[key]
	if !ok {
		ch = make(chan struct{}, 1024)
		g.tokens[key] = ch
	}
	return ch
}

func (g *gate[K]) activate(ctx context.Context, key K) error {
	g.starts <- started[K]{key, ctx}
	select {
	case <-g.token(key):
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (g *gate[K]) onExit(key K, exit Exit) { g.exits <- exited[K]{key, exit} }

// release lets one activation of key (running or to come) return nil.
func (g *gate[K]) release(key K) { g.token(key) <- struct{}{} }

// config returns a Config driven by g.
func (g *gate[K]) config(maxConcurrent, maxQueued int) Config[K] {
	return Config[K]{MaxConcurrent: maxConcurrent, MaxQueued: maxQueued, Activate: g.activate, OnExit: g.onExit}
}

// nextStart waits for the next activation to start and checks its key.
func (g *gate[K]) nextStart(t *testing.T, want K) context.Context {
	t.Helper()
	s := recv(t, g.starts, "an activation to start")
	if s.key != want {
		t.Fatalf("activation of %v started, want %v", s.key, want)
	}
	return s.ctx
}

// nextExit waits for the next OnExit call and checks its key.
func (g *gate[K]) nextExit(t *testing.T, want K) Exit {
	t.Helper()
	e := recv(t, g.exits, "OnExit")
	if e.key != want {
		t.Fatalf("OnExit heard %v (%v), want key %v", e.key, e.exit, want)
	}
	return e.exit
}

// quiet checks, after Close, that no activation started and no OnExit ran
// beyond what the test received.
func (g *gate[K]) quiet(t *testing.T) {
	t.Helper()
	select {
	case s := <-g.starts:
		t.Errorf("unexpected activation of %v", s.key)
	default:
	}
	select {
	case e := <-g.exits:
		t.Errorf("unexpected OnExit(%v, %v)", e.key, e.exit)
	default:
	}
}

// recv waits for a value on ch, failing the test if none comes.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// notYet checks that nothing is on ch now. It cannot fail wrongly: a
// value there means that something happened too early.
func notYet[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s too early", what)
	default:
	}
}

// newLanes returns lanes that are closed when the test ends.
func newLanes[K comparable](t *testing.T, cfg Config[K]) *Lanes[K] {
	t.Helper()
	l, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// wakeWant wakes key and checks the result: a WakeResult, or an error
// that errors.Is the wanted one.
func wakeWant[K comparable](t *testing.T, l *Lanes[K], key K, want any) {
	t.Helper()
	got, err := l.Wake(key)
	switch w := want.(type) {
	case WakeResult:
		if err != nil || got != w {
			t.Fatalf("Wake(%v) = %v, %v; want %v", key, got, err, w)
		}
	case error:
		if !errors.Is(err, w) {
			t.Fatalf("Wake(%v) = %v, %v; want error %v", key, got, err, w)
		}
	default:
		panic("wakeWant: want is neither a WakeResult nor an error")
	}
}

// snapshot is the runtime's bookkeeping, read under its lock.
type snapshot[K comparable] struct {
	states   map[K]fsm.LaneState
	queue    []K
	reserved int
	running  int
}

func (l *Lanes[K]) snapshot() snapshot[K] {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := snapshot[K]{states: map[K]fsm.LaneState{}, queue: l.queue.keys(), reserved: l.reserved, running: l.running}
	for k, ln := range l.lanes {
		s.states[k] = fsm.LaneState(ln.state)
	}
	return s
}

// laneState is the state of key's lane; Idle when it has no entry.
func (l *Lanes[K]) laneState(key K) fsm.LaneState {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ln, ok := l.lanes[key]; ok {
		return fsm.LaneState(ln.state)
	}
	return fsm.LaneIdle
}

// unblocker returns a function that closes ch once, and also calls it when
// the test ends. Register it after newLanes, so that a test that fails
// while an activation or OnExit waits on ch lets it go before Close waits
// for it.
func unblocker(t *testing.T, ch chan struct{}) func() {
	var once sync.Once
	f := func() { once.Do(func() { close(ch) }) }
	t.Cleanup(f)
	return f
}
