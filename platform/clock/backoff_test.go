package clock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rivus/collab/platform/clock"
	"github.com/rivus/collab/platform/platformtest"
)

// waited is a Wait under way in a goroutine of its own.
type waited struct{ done chan error }

func startWait(ctx context.Context, t *testing.T, c *platformtest.Clock, b *clock.Backoff) waited {
	t.Helper()
	w := waited{make(chan error, 1)}
	go func() { w.done <- b.Wait(ctx) }()
	armed, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.WaitForTimers(armed, 1); err != nil {
		t.Fatalf("Wait armed no timer: %v", err)
	}
	return w
}

// expectWait checks that the Wait under way ends once the clock has
// moved at least lo and at most hi, and not before.
func expectWait(t *testing.T, c *platformtest.Clock, w waited, lo, hi time.Duration) {
	t.Helper()
	if fired := c.Advance(lo - 1); fired != 0 {
		t.Fatalf("the wait ended before %v", lo)
	}
	if fired := c.Advance(hi - lo + 1); fired != 1 {
		t.Fatalf("the wait had not ended by %v", hi)
	}
	if err := <-w.done; err != nil {
		t.Fatalf("Wait = %v, want nil", err)
	}
}

func TestBackoffDoublesUpToMax(t *testing.T) {
	c := platformtest.NewClock()
	b := clock.Backoff{Clock: c, First: time.Millisecond, Max: 5 * time.Millisecond}
	for _, d := range []time.Duration{1, 2, 4, 5, 5} {
		d *= time.Millisecond
		expectWait(t, c, startWait(context.Background(), t, c, &b), d, d)
	}
	b.Restart()
	expectWait(t, c, startWait(context.Background(), t, c, &b), time.Millisecond, time.Millisecond)
}

func TestBackoffMaxBelowFirstIsFixed(t *testing.T) {
	c := platformtest.NewClock()
	b := clock.Backoff{Clock: c, First: 3 * time.Millisecond}
	for range 3 {
		expectWait(t, c, startWait(context.Background(), t, c, &b), 3*time.Millisecond, 3*time.Millisecond)
	}
}

// With Jitter, each wait lasts between half the delay and the delay.
func TestBackoffJitter(t *testing.T) {
	c := platformtest.NewClock()
	b := clock.Backoff{Clock: c, First: 8 * time.Millisecond, Max: 8 * time.Millisecond, Jitter: true}
	for range 50 {
		expectWait(t, c, startWait(context.Background(), t, c, &b), 4*time.Millisecond, 8*time.Millisecond)
	}
}

// A wait that ctx ends returns its cause, stops its timer and leaves the
// next delay as it was.
func TestBackoffCancelled(t *testing.T) {
	c := platformtest.NewClock()
	b := clock.Backoff{Clock: c, First: time.Millisecond, Max: time.Second}
	expectWait(t, c, startWait(context.Background(), t, c, &b), time.Millisecond, time.Millisecond)
	cause := errors.New("given up")
	ctx, cancel := context.WithCancelCause(context.Background())
	w := startWait(ctx, t, c, &b)
	cancel(cause)
	if err := <-w.done; err != cause {
		t.Fatalf("Wait = %v, want the cause %v", err, cause)
	}
	if n := c.Pending(); n != 0 {
		t.Fatalf("%d timers pending after the cancelled wait, want 0", n)
	}
	expectWait(t, c, startWait(context.Background(), t, c, &b), 2*time.Millisecond, 2*time.Millisecond)
}

// A nil Clock is the real one.
func TestBackoffRealClock(t *testing.T) {
	b := clock.Backoff{First: time.Microsecond}
	start := time.Now()
	if err := b.Wait(context.Background()); err != nil {
		t.Fatalf("Wait = %v, want nil", err)
	}
	if took := time.Since(start); took < time.Microsecond {
		t.Fatalf("Wait returned after %v, before its delay", took)
	}
}
