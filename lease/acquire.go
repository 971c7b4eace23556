package lease

import (
	"context"

	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/lease/internal/check"
	"github.com/rivus/collab/lease/store"
)

// AcquireOption configures an acquisition (Manager.Acquire, AcquireWait).
type AcquireOption func(*acquireOptions)

type acquireOptions struct {
	value string
}

// WithValue publishes v with the lease: every write of the holder stores
// it in the record, for observers (lease/leader's Observe, `collab lease
// ls`) to read, as etcd's election value or a Consul lock's value. Its
// uses are an address where the holder can be reached, or a version. It
// is store.Snapshot.Value: at most store.MaxValueLen bytes of valid
// UTF-8 without NUL. It stays for the lease's life; a new value takes a
// new acquisition. The tombstone of a release or a break publishes none.
func WithValue(v string) AcquireOption {
	return func(o *acquireOptions) { o.value = v }
}

// Acquire takes the lease on key, or returns a *HeldError while a live
// holder renews it, and ErrClosed once the manager is closing. A holder
// on this process table whose process is gone (or whose pid now belongs
// to another process) is taken over at once; a live one that stopped
// renewing, and one in another process table, after the TTL on this
// manager's monotonic clock from when it first saw the holder's current
// record.
//
// Options publish a value with the lease (WithValue); an invalid one is
// a *store.SnapshotFieldError, before anything is read.
func (m *Manager) Acquire(ctx context.Context, key string, opts ...AcquireOption) (*Lease, error) {
	if err := check.Call(ctx, key); err != nil {
		return nil, err
	}
	var o acquireOptions
	for _, opt := range opts {
		opt(&o)
	}
	if err := store.ValidateValue(o.value); err != nil {
		return nil, err
	}
	self, err := m.p.Process.Self()
	if err != nil {
		return nil, err
	}
	h := &Lease{m: m, key: key, self: self, value: o.value, lost: make(chan struct{}), fenced: map[*context.CancelCauseFunc]struct{}{}}
	h.step.State = m.pol.Initial()
	if monitoring {
		h.mon = new(leaseMonitor)
	}
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	m.acquiring.Add(1)
	defer m.acquiring.Done()
	m.steppedLocked(h, leasestep.Acquire(m.pol, h.env(), &h.step))
	err = m.callsLocked(ctx, h)
	r, holder := h.reply, h.loaded.Snapshot.Holder
	m.unlockAndReport()
	switch {
	case r&replyAcquired != 0:
		return h, nil
	case r&replyHeld != 0:
		return nil, &HeldError{Key: key, Holder: &holder}
	case r&replyRepoError != 0:
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	panic("lease: policy " + m.pol.Name() + " left Acquire with nothing to do")
}
