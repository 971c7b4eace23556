package lease

import "context"

// StoreSeen tells the contract monitor's store check (monitored builds)
// of a revision a test saw outside any manager, as writeBehind's.
var StoreSeen = storeSeen

// Settle waits until m has done everything due by its clock's reading
// now: the timer loop has planned since, no batch is being written, no
// event waits to be reported, and every AcquireWait call waits on the
// loop.
func Settle(ctx context.Context, m *Manager) error {
	target := m.now()
	for {
		m.mu.Lock()
		done := m.plannedAt >= target && !m.saving && !m.reporting && len(m.outbox) == 0 && m.trying == 0
		if m.changed == nil {
			m.changed = make(chan struct{})
		}
		changed := m.changed
		m.mu.Unlock()
		if done {
			return nil
		}
		m.kickLoop()
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
