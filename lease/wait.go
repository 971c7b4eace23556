package lease

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/rivus/collab/platform"
)

// AcquireWait acquires the lease on key, waiting while another holder has
// it, until ctx ends (then it returns context.Cause(ctx) and holds
// nothing). It tries again every TTL/10 or so (this manager's TTL, with
// jitter, so that waiters of several processes do not try in step): it
// takes the lease soon after the holder releases it or is proven dead,
// and takes a silent holder over once the TTL has passed since this
// manager first saw the holder's record, as Acquire does. Any error other
// than a *HeldError ends the wait and is returned.
func (m *Manager) AcquireWait(ctx context.Context, key string) (*Lease, error) {
	var timer platform.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		h, err := m.Acquire(ctx, key)
		if !errors.Is(err, ErrHeld) {
			return h, err
		}
		d := waitPoll(m.cfg.TTL)
		if timer == nil {
			timer = m.clock.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		select {
		case <-timer.C():
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// waitPoll is the wait between two attempts of AcquireWait: between a
// twentieth and a tenth of ttl, at least a millisecond.
func waitPoll(ttl time.Duration) time.Duration {
	d := max(ttl/10, 2*time.Millisecond)
	return d/2 + rand.N(d/2+1)
}
