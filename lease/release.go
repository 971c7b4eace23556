package lease

import (
	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/lease/internal/hook"
)

// Close releases the lease: it re-reads the record and writes a tombstone
// that keeps this generation, only if the record still holds it, so that
// it never erases a successor; if the record moves in between, it reads
// it again. Fenced work still running is cancelled with
// cause ErrReleased. It is idempotent; a lost lease is closed the same way:
// where a successor or a break has moved the record on, it writes
// nothing, and where the lease was lost at its deadline, the record still
// holds its generation and gets the tombstone.
func (h *Lease) Close() error {
	h.closeOnce.Do(func() {
		h.closeErr = h.release()
		h.closed.Store(true)
	})
	return h.closeErr
}

func init() {
	hook.Closed = func(l any) bool { return l.(*Lease).closed.Load() }
}

func (h *Lease) release() error {
	m := h.m
	// The record outlives a stuck repository by at most a TTL: bound the
	// release by it.
	ctx, cancel := m.withTimeout(m.cfg.TTL)
	defer cancel()
	m.mu.Lock()
	defer m.unlockAndReport()
	// The policy takes Release only between repository calls.
	for h.step.Call != leasestep.CallNone {
		m.cond.Wait()
	}
	h.reply = 0
	m.steppedLocked(h, leasestep.Release(m.pol, h.env(), &h.step))
	// A conflict on the tombstone makes the step read again: a
	// successor's write leaves nothing of ours to release; a renewal of
	// ours that landed late (its call given up, its write applied after
	// all) still holds our generation, and gets the tombstone.
	err := m.callsLocked(ctx, h)
	if h.reply&replyRepoError != 0 {
		return err
	}
	return nil
}
