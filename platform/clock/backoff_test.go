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

// startWait starts b.Wait(ctx) and returns once it has armed its timer.
func startWait(ctx context.Context, t *testing.T, c *platformtest.Clock, b *clock.Backoff) waited {
	t.Helper()
	w := waited{make(chan error, 1)}
	go func() { w.done <- b.Wait(ctx) }()
	if err := c.WaitForTimers(ctx, 1); err != nil {
		t.Fatalf("Wait armed no timer: %v", err)
	}
	return w
}

// result is the Wait's result, or a failure once the test's context ends.
func (w waited) result(t *testing.T) error {
	t.Helper()
	select {
	case err := <-w.done:
		return err
	case <-t.Context().Done():
		t.Fatal("the Wait never returned")
		return nil
	}
}

// expectWait checks that the Wait under way ends once the clock has
// moved d, and not before.
func expectWait(t *testing.T, c *platformtest.Clock, w waited, d time.Duration) {
	t.Helper()
	if fired := c.Advance(d - 1); fired != 0 {
		t.Fatalf("the wait ended before %v", d)
	}
	if fired := c.Advance(1); fired != 1 {
		t.Fatalf("the wait had not ended at %v", d)
	}
	if err := w.result(t); err != nil {
		t.Fatalf("Wait = %v, want nil", err)
	}
}

// measureWait moves the clock in steps of step until the Wait under way
// ends, and returns how far it moved: the wait's length, rounded up to a
// step.
func measureWait(t *testing.T, c *platformtest.Clock, w waited, step, limit time.Duration) time.Duration {
	t.Helper()
	for moved := step; moved <= limit; moved += step {
		if c.Advance(step) == 1 {
			if err := w.result(t); err != nil {
				t.Fatalf("Wait = %v, want nil", err)
			}
			return moved
		}
	}
	t.Fatalf("the wait had not ended after %v", limit)
	return 0
}

func TestBackoffDoublesUpToMax(t *testing.T) {
	c := platformtest.NewClock()
	b := clock.Backoff{Clock: c, First: time.Millisecond, Max: 5 * time.Millisecond}
	for _, d := range []time.Duration{1, 2, 4, 5, 5} {
		expectWait(t, c, startWait(t.Context(), t, c, &b), d*time.Millisecond)
	}
	b.Restart()
	expectWait(t, c, startWait(t.Context(), t, c, &b), time.Millisecond)
}

// With Max at 0, or below First, every wait is First.
func TestBackoffMaxBelowFirstIsFixed(t *testing.T) {
	for _, limit := range []time.Duration{0, time.Millisecond} {
		c := platformtest.NewClock()
		b := clock.Backoff{Clock: c, First: 3 * time.Millisecond, Max: limit}
		for range 3 {
			expectWait(t, c, startWait(t.Context(), t, c, &b), 3*time.Millisecond)
		}
	}
}

// With Jitter, each wait lasts between half its delay and its delay, the
// delay doubles as without jitter, and the waits differ.
func TestBackoffJitter(t *testing.T) {
	const step = 100 * time.Microsecond
	c := platformtest.NewClock()
	b := clock.Backoff{Clock: c, First: 8 * time.Millisecond, Max: 32 * time.Millisecond, Jitter: true}
	short := 0
	for i := range 40 {
		delay := min(8*time.Millisecond<<i, 32*time.Millisecond)
		w := startWait(t.Context(), t, c, &b)
		if fired := c.Advance(delay/2 - 1); fired != 0 {
			t.Fatalf("wait %d, of delay %v, ended before half of it", i, delay)
		}
		took := delay/2 - 1 + measureWait(t, c, w, step, delay/2+step)
		if took > delay+step {
			t.Fatalf("wait %d took %v, more than its delay %v", i, took, delay)
		}
		if took < delay-step {
			short++
		}
	}
	if short == 0 {
		t.Fatal("every wait lasted its whole delay: no jitter")
	}
}

// A wait that ctx ends returns its cause, stops its timer and leaves the
// next delay as it was.
func TestBackoffCancelled(t *testing.T) {
	c := platformtest.NewClock()
	b := clock.Backoff{Clock: c, First: time.Millisecond, Max: time.Second}
	expectWait(t, c, startWait(t.Context(), t, c, &b), time.Millisecond)
	cause := errors.New("given up")
	ctx, cancel := context.WithCancelCause(t.Context())
	w := startWait(ctx, t, c, &b)
	cancel(cause)
	if err := w.result(t); err != cause {
		t.Fatalf("Wait = %v, want the cause %v", err, cause)
	}
	if n := c.Pending(); n != 0 {
		t.Fatalf("%d timers pending after the cancelled wait, want 0", n)
	}
	expectWait(t, c, startWait(t.Context(), t, c, &b), 2*time.Millisecond)
}

// A First not above 0 panics, naming the field.
func TestBackoffFirstMissing(t *testing.T) {
	defer func() {
		if v := recover(); v == nil {
			t.Fatal("Wait with no First did not panic")
		}
	}()
	var b clock.Backoff
	_ = b.Wait(t.Context())
}

// A nil Clock is the real one: the wait ends, and not before its delay.
func TestBackoffRealClock(t *testing.T) {
	b := clock.Backoff{First: time.Microsecond}
	start := time.Now()
	if err := b.Wait(t.Context()); err != nil {
		t.Fatalf("Wait = %v, want nil", err)
	}
	if took := time.Since(start); took < time.Microsecond {
		t.Fatalf("Wait returned after %v, before its delay", took)
	}
}

// Next draws the delays Wait waits, doubling up to Max, with jitter
// within [delay/2, delay], and arms no timer.
func TestBackoffNext(t *testing.T) {
	c := platformtest.NewClock()
	b := clock.Backoff{Clock: c, First: time.Millisecond, Max: 5 * time.Millisecond}
	for _, d := range []time.Duration{1, 2, 4, 5, 5} {
		if got := b.Next(); got != d*time.Millisecond {
			t.Fatalf("Next = %v, want %v", got, d*time.Millisecond)
		}
	}
	b = clock.Backoff{Clock: c, First: 8 * time.Millisecond, Jitter: true}
	seen := map[time.Duration]bool{}
	for range 50 {
		d := b.Next()
		if d < 4*time.Millisecond || d > 8*time.Millisecond {
			t.Fatalf("Next with jitter = %v, want within [4ms, 8ms]", d)
		}
		seen[d] = true
	}
	if len(seen) < 2 {
		t.Errorf("50 draws with jitter gave one delay: %v", seen)
	}
	if n := c.Pending(); n != 0 {
		t.Errorf("Next armed %d timers", n)
	}
}

// TestBackoffWaitOrWake: a wake ends WaitOr at once, with nil, without
// the clock moving, stops its timer, and leaves the next delay as it was.
func TestBackoffWaitOrWake(t *testing.T) {
	c := platformtest.NewClock()
	b := clock.Backoff{Clock: c, First: time.Millisecond, Max: time.Second}
	wake := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() { done <- b.WaitOr(t.Context(), wake) }()
	if err := c.WaitForTimers(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	wake <- struct{}{}
	if err := (waited{done}).result(t); err != nil {
		t.Fatalf("WaitOr woken = %v, want nil", err)
	}
	if n := c.Pending(); n != 0 {
		t.Fatalf("%d timers pending after the wake, want 0", n)
	}
	expectWait(t, c, startWait(t.Context(), t, c, &b), time.Millisecond)
}
