package lanes

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/rivus/collab/fsm"
)

// Cancel of a waiting lane drops its wake: OnExit hears it before Cancel
// returns, and it never starts.
func TestCancelWaiting(t *testing.T) {
	g := newGate[string]()
	l := newLanes(t, g.config(1, 0))
	wakeWant(t, l, "a", Started)
	wakeWant(t, l, "b", Queued)
	wakeWant(t, l, "c", Queued)
	if err := l.Cancel(context.Background(), "b"); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	want := Interrupted{Started: false, Cause: ErrCancelled}
	select {
	case e := <-g.exits:
		if e.key != "b" || e.exit != want {
			t.Errorf("OnExit(%v, %v), want OnExit(b, %v)", e.key, e.exit, want)
		}
	default:
		t.Fatal("Cancel returned before OnExit heard the dropped wake")
	}
	if s := l.snapshot(); !slices.Equal(s.queue, []string{"c"}) {
		t.Errorf("queue = %v, want [c]", s.queue)
	}
	g.nextStart(t, "a")
	g.release("a")
	g.nextExit(t, "a")
	g.nextStart(t, "c") // not b
	g.release("c")
	g.nextExit(t, "c")
	l.Close()
	g.quiet(t)
}

// Cancel of a running lane drops its owed follow-up, interrupts the
// activation with cause ErrCancelled, and returns only once the
// activation has returned and OnExit has run for it.
func TestCancelRunning(t *testing.T) {
	var (
		mu    sync.Mutex
		order []string
	)
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, s)
	}
	dropped := Interrupted{Started: false, Cause: ErrCancelled}
	interrupted := make(chan error, 1)
	release := make(chan struct{})
	inOnExit := make(chan Exit, 2)
	releaseOnExit := make(chan struct{})
	l := newLanes(t, Config[string]{
		Activate: func(ctx context.Context, _ string) error {
			<-ctx.Done()
			interrupted <- context.Cause(ctx)
			<-release
			note("activation returned")
			return ctx.Err()
		},
		OnExit: func(_ string, e Exit) {
			inOnExit <- e
			if e != dropped {
				<-releaseOnExit
				note("OnExit ran")
			}
		},
	})
	unblockActivation := unblocker(t, release)
	unblockOnExit := unblocker(t, releaseOnExit)
	wakeWant(t, l, "a", Started)
	wakeWant(t, l, "a", Queued)

	cancelled := make(chan error, 1)
	go func() {
		err := l.Cancel(context.Background(), "a")
		note("Cancel returned")
		cancelled <- err
	}()
	if cause := recv(t, interrupted, "the interruption"); !errors.Is(cause, ErrCancelled) {
		t.Errorf("cause = %v, want ErrCancelled", cause)
	}
	if e := recv(t, inOnExit, "OnExit of the dropped follow-up"); e != dropped {
		t.Errorf("first OnExit = %v, want %v", e, dropped)
	}
	notYet(t, cancelled, "Cancel returning while the activation runs")
	if st := l.laneState("a"); st != fsm.LaneCancelling {
		t.Errorf("lane is %v while the cancelled activation runs, want Cancelling", st)
	}
	unblockActivation()
	want := Interrupted{Started: true, Cause: ErrCancelled}
	if e := recv(t, inOnExit, "OnExit of the activation"); e != want {
		t.Errorf("OnExit = %v, want %v", e, want)
	}
	notYet(t, cancelled, "Cancel returning while OnExit runs")
	unblockOnExit()
	if err := recv(t, cancelled, "Cancel to return"); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	mu.Lock()
	got := slices.Clone(order)
	mu.Unlock()
	if !slices.Equal(got, []string{"activation returned", "OnExit ran", "Cancel returned"}) {
		t.Errorf("order = %q", got)
	}
	if st := l.laneState("a"); st != fsm.LaneIdle {
		t.Errorf("lane is %v after Cancel returned, want Idle (no follow-up)", st)
	}
	l.Close()
	notYet(t, inOnExit, "an OnExit for a follow-up Cancel dropped")
}

// Cancel of a key with nothing running or owed returns at once.
func TestCancelIdle(t *testing.T) {
	g := newGate[string]()
	l := newLanes(t, g.config(1, NoQueue))
	if err := l.Cancel(context.Background(), "never woken"); err != nil {
		t.Errorf("Cancel of an unknown key: %v", err)
	}
	wakeWant(t, l, "a", Started)
	wakeWant(t, l, "refused", ErrQueueFull)
	if err := l.Cancel(context.Background(), "refused"); err != nil {
		t.Errorf("Cancel of a refused key: %v", err)
	}
	g.nextStart(t, "a")
	notYet(t, g.exits, "OnExit for a Cancel of an idle key")
}

// Cancel whose ctx ends first returns the ctx's cause; the cancellation
// stands, and a wake after it is served by a new activation.
func TestCancelContextEnds(t *testing.T) {
	stop := errors.New("caller gave up")
	release := make(chan struct{})
	// Each activation sends its ctx and whether it was done at the start.
	type begun struct {
		ctx context.Context
		err error
	}
	starts := make(chan begun, 2)
	exits := make(chan Exit, 2)
	l := newLanes(t, Config[string]{
		Activate: func(ctx context.Context, _ string) error {
			starts <- begun{ctx, ctx.Err()}
			<-release // deaf to its ctx until released
			return ctx.Err()
		},
		OnExit: func(_ string, e Exit) { exits <- e },
	})
	unblock := unblocker(t, release)
	wakeWant(t, l, "a", Started)
	actx := recv(t, starts, "the activation").ctx
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(stop)
	if err := l.Cancel(ctx, "a"); !errors.Is(err, stop) {
		t.Fatalf("Cancel = %v, want the ctx's cause %v", err, stop)
	}
	if cause := context.Cause(actx); !errors.Is(cause, ErrCancelled) {
		t.Errorf("activation's cause = %v, want ErrCancelled", cause)
	}
	wakeWant(t, l, "a", Queued) // the cancelled activation still runs
	unblock()
	if e := recv(t, exits, "OnExit"); e != (Interrupted{Started: true, Cause: ErrCancelled}) {
		t.Errorf("exit = %v, want interrupted by Cancel", e)
	}
	if next := recv(t, starts, "the activation woken after Cancel"); next.err != nil {
		t.Errorf("new activation started interrupted: %v", context.Cause(next.ctx))
	}
}
