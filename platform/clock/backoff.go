package clock

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff paces the attempts of a poll. A process waiting for a lock that
// another process holds gets no wake-up from the kernel or the server
// when it is let go (flock(2) would block a thread no context can
// interrupt, and an advisory lock a query that only a closed connection
// cancels), so it tries again after a delay: First, doubled after each
// wait up to Max. With Jitter, each wait is drawn between half the delay
// and the delay, so that pollers of several processes do not try in step.
//
// Set Clock (nil means Real) and First before the first Wait; a First
// not above 0 is a mistake of the program, and Wait panics on it. A Backoff is for one goroutine. No timer of it runs between its
// waits, so it needs no stopping.
type Backoff struct {
	Clock  Clock
	First  time.Duration
	Max    time.Duration // less than First: every wait is First
	Jitter bool

	delay time.Duration // the next wait's delay; 0 before the first
	timer Timer         // made by the first wait, reused by the others; stopped or fired between waits
}

// Wait waits for the next delay to pass, and returns nil; or for ctx to
// end first, and returns context.Cause(ctx), leaving the next delay as it
// was.
func (b *Backoff) Wait(ctx context.Context) error { return b.WaitOr(ctx, nil) }

// WaitOr is Wait that also returns nil early, leaving the next delay as
// it was, when wake receives (a nil wake never does): for a poll that
// something may wake sooner, as a release's notification does.
func (b *Backoff) WaitOr(ctx context.Context, wake <-chan struct{}) error {
	d := b.draw()
	if b.timer == nil {
		c := b.Clock
		if c == nil {
			c = Real()
		}
		b.timer = c.NewTimer(d)
	} else {
		b.timer.Reset(d)
	}
	select {
	case <-b.timer.C():
		b.grow()
		return nil
	case <-wake:
		b.timer.Stop()
		return nil
	case <-ctx.Done():
		b.timer.Stop()
		return context.Cause(ctx)
	}
}

// Next returns the next wait's delay, drawn as Wait draws it, and moves
// on as a Wait that ran its course does: for a caller that waits on a
// timer of its own. Clock is not used.
func (b *Backoff) Next() time.Duration {
	d := b.draw()
	b.grow()
	return d
}

// draw returns the next wait's delay, with jitter if asked.
func (b *Backoff) draw() time.Duration {
	if b.delay == 0 {
		if b.First <= 0 {
			panic("clock: Backoff.First is " + b.First.String() + "; want more than 0")
		}
		b.delay = b.First
	}
	d := b.delay
	if b.Jitter {
		d = d/2 + rand.N(d/2+1)
	}
	return d
}

// grow doubles the delay after a wait, up to Max.
func (b *Backoff) grow() { b.delay = max(min(2*b.delay, b.Max), b.First) }

// Restart makes the next wait as short as the first.
func (b *Backoff) Restart() { b.delay = 0 }
