package lanes

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// deaf is an Activate that reports each start and interruption, then
// returns only when released: so a test sees who waits for it.
type deaf struct {
	starts      chan string
	interrupted chan error
	release     chan struct{}
	returned    atomic.Int32
}

func newDeaf() *deaf {
	return &deaf{starts: make(chan string, 64), interrupted: make(chan error, 64), release: make(chan struct{})}
}

func (d *deaf) activate(ctx context.Context, key string) error {
	d.starts <- key
	<-ctx.Done()
	d.interrupted <- context.Cause(ctx)
	<-d.release
	d.returned.Add(1)
	return ctx.Err()
}

// exitLog is an OnExit that records what it heard.
type exitLog struct {
	mu    sync.Mutex
	exits map[string][]Exit
}

func (x *exitLog) onExit(key string, e Exit) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.exits == nil {
		x.exits = map[string][]Exit{}
	}
	x.exits[key] = append(x.exits[key], e)
}

func (x *exitLog) get() map[string][]Exit {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.exits
}

// Close refuses later wakes, drops the queue and the owed follow-ups,
// interrupts every activation with cause ErrClosed, and returns once they
// all returned; the map is empty afterwards, and Close is idempotent.
func TestClose(t *testing.T) {
	d := newDeaf()
	var x exitLog
	l := newLanes(t, Config[string]{MaxConcurrent: 2, Activate: d.activate, OnExit: x.onExit})
	unblock := unblocker(t, d.release)
	for _, w := range []w{{"a", Started}, {"b", Started}, {"a", Queued}, {"c", Queued}, {"d", Queued}} {
		wakeWant(t, l, w.key, w.want)
	}
	recv(t, d.starts, "a start")
	recv(t, d.starts, "a start")

	closed := make(chan error, 1)
	go func() { closed <- l.Close() }()
	for range 2 {
		if cause := recv(t, d.interrupted, "an interruption"); !errors.Is(cause, ErrClosed) {
			t.Errorf("cause = %v, want ErrClosed", cause)
		}
	}
	wakeWant(t, l, "a", ErrClosed) // its activation still runs
	wakeWant(t, l, "e", ErrClosed) // a key never seen
	notYet(t, closed, "Close returning while activations run")
	unblock()
	if err := recv(t, closed, "Close to return"); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := d.returned.Load(); n != 2 {
		t.Errorf("Close returned after %d of 2 activations returned", n)
	}

	dropped := Interrupted{Started: false, Cause: ErrClosed}
	cut := Interrupted{Started: true, Cause: ErrClosed}
	want := map[string][]Exit{"a": {dropped, cut}, "b": {cut}, "c": {dropped}, "d": {dropped}}
	got := x.get()
	for k, es := range want {
		if len(got[k]) != len(es) {
			t.Errorf("OnExit heard %v for %s, want %v", got[k], k, es)
			continue
		}
		for _, e := range es {
			n := 0
			for _, g := range got[k] {
				if g == e {
					n++
				}
			}
			if n != 1 {
				t.Errorf("OnExit heard %v for %s, want %v", got[k], k, es)
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("OnExit heard keys %v, want a, b, c, d", got)
	}
	if s := l.snapshot(); len(s.states) != 0 || len(s.queue) != 0 || s.reserved != 0 || s.running != 0 {
		t.Errorf("after Close: %+v; want nothing left", s)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	wakeWant(t, l, "a", ErrClosed)
	if err := l.Cancel(context.Background(), "a"); err != nil {
		t.Errorf("Cancel after Close: %v", err)
	}
	if s := l.snapshot(); len(s.states) != 0 {
		t.Errorf("a refused wake after Close left %d lanes", len(s.states))
	}
}

// Every one of several concurrent Close calls waits for the activations.
func TestConcurrentClose(t *testing.T) {
	d := newDeaf()
	l := newLanes(t, Config[string]{MaxConcurrent: 2, Activate: d.activate})
	unblock := unblocker(t, d.release)
	wakeWant(t, l, "a", Started)
	wakeWant(t, l, "b", Started)
	recv(t, d.starts, "a start")
	recv(t, d.starts, "a start")

	const callers = 4
	calling := make(chan struct{}, callers)
	early := make(chan int32, callers)
	for range callers {
		go func() {
			calling <- struct{}{}
			l.Close()
			early <- 2 - d.returned.Load() // activations still running
		}()
	}
	for range callers {
		recv(t, calling, "a Close call")
	}
	recv(t, d.interrupted, "an interruption")
	recv(t, d.interrupted, "an interruption")
	unblock()
	for range callers {
		if n := recv(t, early, "Close to return"); n != 0 {
			t.Errorf("a Close call returned while %d activations ran", n)
		}
	}
}

type ctxKey struct{}

// An activation runs with the values of the ctx given to New but not its
// cancellation or deadline: cancelling that ctx closes the lanes, which
// interrupt the activation with ErrClosed.
func TestNewContext(t *testing.T) {
	parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), ctxKey{}, "v"))
	parent, stopDeadline := context.WithTimeout(parent, patience)
	defer stopDeadline()
	starts := make(chan context.Context, 1)
	l, err := New(parent, Config[string]{Activate: func(ctx context.Context, _ string) error {
		starts <- ctx
		<-ctx.Done()
		return ctx.Err()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	wakeWant(t, l, "a", Started)
	actx := recv(t, starts, "the activation")
	if v := actx.Value(ctxKey{}); v != "v" {
		t.Errorf("activation's ctx value = %v, want v", v)
	}
	if _, ok := actx.Deadline(); ok {
		t.Error("activation's ctx has the deadline of New's ctx")
	}
	cancel(errors.New("parent gone"))
	<-actx.Done()
	if cause := context.Cause(actx); !errors.Is(cause, ErrClosed) {
		t.Errorf("activation's cause = %v, want ErrClosed", cause)
	}
	// The lanes were closed before the activation was interrupted.
	wakeWant(t, l, "b", ErrClosed)
	l.Close()
}

// New with a ctx already done returns lanes that close themselves; it
// must not race with or crash on the ctx watch it sets up.
func TestNewDoneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 1000 {
		l, err := New(ctx, Config[string]{Activate: func(ctx context.Context, _ string) error {
			<-ctx.Done()
			if cause := context.Cause(ctx); !errors.Is(cause, ErrClosed) {
				t.Errorf("cause = %v, want ErrClosed", cause)
			}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		// Started if the wake came before the lanes closed themselves.
		if _, err := l.Wake("a"); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("Wake = %v, want Started or ErrClosed", err)
		}
		l.Close()
	}
}

// TestStopFromInside: an activation that cancels New's ctx stops the
// lanes without waiting for itself: its own ctx is interrupted, and later
// wakes get ErrClosed.
func TestStopFromInside(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := make(chan error, 1)
	l, err := New(ctx, Config[string]{MaxConcurrent: 1,
		Activate: func(actx context.Context, _ string) error {
			cancel()
			<-actx.Done()
			interrupted <- context.Cause(actx)
			return actx.Err()
		}})
	if err != nil {
		t.Fatal(err)
	}
	wakeWant(t, l, "a", Started)
	if cause := <-interrupted; !errors.Is(cause, ErrClosed) {
		t.Fatalf("the activation's ctx ended with %v, want ErrClosed", cause)
	}
	l.Close()
	wakeWant(t, l, "b", ErrClosed)
}
