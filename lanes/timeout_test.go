package lanes

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivus/collab/platform/clock"
	"github.com/rivus/collab/platform/platformtest"
)

// TurnTimeout interrupts an activation that runs longer, with cause
// ErrTurnTimeout, and keeps the follow-up it owes.
func TestTurnTimeout(t *testing.T) {
	clock := platformtest.NewClock()
	g := newGate[string]()
	cfg := g.config(1, 0)
	cfg.TurnTimeout = time.Minute
	cfg.Clock = clock
	l := newLanes(t, cfg)

	wakeWant(t, l, "a", Started)
	actx := g.nextStart(t, "a")
	wakeWant(t, l, "a", Queued)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := clock.WaitForTimers(ctx, 1); err != nil {
		t.Fatalf("no turn timer armed: %v", err)
	}
	clock.Advance(time.Minute - time.Nanosecond)
	if err := actx.Err(); err != nil {
		t.Fatalf("activation interrupted before its turn timeout: %v", err)
	}
	clock.Advance(time.Nanosecond)
	<-actx.Done()
	if cause := context.Cause(actx); !errors.Is(cause, ErrTurnTimeout) {
		t.Errorf("cause = %v, want ErrTurnTimeout", cause)
	}
	want := Interrupted{Started: true, Cause: ErrTurnTimeout}
	if e := g.nextExit(t, "a"); e != want {
		t.Errorf("exit = %v, want %v", e, want)
	}

	// The owed follow-up runs, with a turn timer of its own.
	next := g.nextStart(t, "a")
	if next.Err() != nil {
		t.Fatalf("follow-up started interrupted: %v", context.Cause(next))
	}
	g.release("a")
	if e := g.nextExit(t, "a"); e != (Succeeded{}) {
		t.Errorf("follow-up exit = %v, want succeeded", e)
	}
	l.Close()
	g.quiet(t)
}

// An activation that ends in time is not interrupted when the clock later
// passes its deadline, and the timer does not touch the next activation.
func TestTurnTimeoutDisarmed(t *testing.T) {
	clock := platformtest.NewClock()
	g := newGate[string]()
	cfg := g.config(1, 0)
	cfg.TurnTimeout = time.Minute
	cfg.Clock = clock
	l := newLanes(t, cfg)

	wakeWant(t, l, "a", Started)
	g.nextStart(t, "a")
	wakeWant(t, l, "a", Queued)
	clock.Advance(30 * time.Second)
	g.release("a")
	g.nextExit(t, "a")
	next := g.nextStart(t, "a") // started at 30 s: due at 90 s
	clock.Advance(45 * time.Second)
	if err := next.Err(); err != nil {
		t.Fatalf("follow-up interrupted by its predecessor's timer: %v", context.Cause(next))
	}
	clock.Advance(15 * time.Second)
	<-next.Done()
	if e := g.nextExit(t, "a"); e != (Interrupted{Started: true, Cause: ErrTurnTimeout}) {
		t.Errorf("exit = %v, want interrupted by the turn timeout", e)
	}
}

// An OnExit that outlasts TurnTimeout hears no timeout of an activation
// that returned in time: Hooks.TimedOut does not fire for it.
func TestTurnTimeoutAfterReturnIgnored(t *testing.T) {
	clock := &ranClock{platformtest.NewClock(), make(chan struct{}, 1)}
	inOnExit, leave := make(chan struct{}), make(chan struct{})
	var timedOut atomic.Int32
	cfg := Config[string]{MaxConcurrent: 1, TurnTimeout: time.Minute, Clock: clock,
		Activate: func(context.Context, string) error { return nil },
		OnExit:   func(string, Exit) { close(inOnExit); <-leave },
		Hooks:    Hooks[string]{TimedOut: func(string) { timedOut.Add(1) }}}
	l := newLanes(t, cfg)
	wakeWant(t, l, "a", Started)
	<-inOnExit
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := clock.WaitForTimers(ctx, 1); err != nil {
		t.Fatalf("no turn timer armed: %v", err)
	}
	clock.Advance(time.Minute) // the timer fires while OnExit runs
	<-clock.ran
	close(leave)
	l.Close()
	if n := timedOut.Load(); n != 0 {
		t.Fatalf("TimedOut fired %d times for an activation that returned in time", n)
	}
}

// ranClock is a fake clock that tells when a function of AfterFunc has
// run, so that a test can look after it.
type ranClock struct {
	*platformtest.Clock
	ran chan struct{}
}

func (c *ranClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return c.Clock.AfterFunc(d, func() { f(); c.ran <- struct{}{} })
}
