package lanes

import (
	"context"
	"errors"
	"testing"
	"time"

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
