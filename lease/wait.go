package lease

import (
	"context"
	"errors"
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
	// Between a twentieth and a tenth of the TTL, at least a millisecond.
	wait := platform.Backoff{Clock: m.clock, First: max(m.cfg.TTL/10, 2*time.Millisecond), Jitter: true}
	for {
		h, err := m.Acquire(ctx, key)
		if !errors.Is(err, ErrHeld) {
			return h, err
		}
		if err := wait.Wait(ctx); err != nil {
			return nil, err
		}
	}
}
