package lease

import (
	"context"

	"github.com/rivus/collab/internal/leasestep"
	"slices"
	"time"
)

// StoreSeen tells the contract monitor's store check (monitored builds)
// of a revision a test saw outside any manager, as writeBehind's.
var StoreSeen = storeSeen

// Settle waits until m has done everything due by its clock's reading:
// it is Quiet, and no batch is being written.
func Settle(ctx context.Context, m *Manager) error {
	for {
		changed := Changed(m)
		if quiet, saving := Quiet(m); quiet && !saving {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Sleeping returns how many AcquireWait calls wait on m's loop.
func Sleeping(m *Manager) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sleepers)
}

// Quiet reports whether m's own goroutines wait for nothing but the
// clock, a batch in the store, or a caller: the loop's own timer has not
// fired (it would plan again, even for nothing), no timer of the loop is due
// by its clock's reading now and no kick is pending, no event waits to
// be reported, and no AcquireWait call is making an attempt; saving says
// whether a batch is in the store.
func Quiet(m *Manager) (quiet, saving bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	due := func(at time.Duration, ok bool) bool { return ok && at <= now }
	if due(m.wakeAt, m.wakeArmed) || due(m.deadlines.next()) || !m.saving && due(m.renewals.next()) || slices.ContainsFunc(m.sleepers, func(s *sleeper) bool { return s.at <= now }) {
		return false, m.saving
	}
	return !m.planning && m.kicksPlanned == m.kicks && !m.reporting && len(m.outbox) == 0 && m.trying == 0, m.saving
}

// InFlight reports whether h has a repository call in flight.
func InFlight(h *Lease) bool {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	return h.step.Call != leasestep.CallNone
}

// Changed returns a channel closed at m's next change that Quiet can see
// (the loop has planned, a report is done, an AcquireWait is waiting).
func Changed(m *Manager) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.changed == nil {
		m.changed = make(chan struct{})
	}
	return m.changed
}
