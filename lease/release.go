package lease

import (
	"context"
	"errors"

	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/policy"
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
	h.closeOnce.Do(func() { h.closeErr = h.release() })
	return h.closeErr
}

func (h *Lease) release() error {
	m := h.m
	m.mu.Lock()
	// The policy takes Release only between repository calls.
	for h.inflight {
		m.cond.Wait()
	}
	out := m.fireLocked(h, trRelease, 0)
	m.mu.Unlock()
	// The record outlives a stuck repository by at most a TTL: bound the
	// release by it.
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.TTL)
	defer cancel()
	var (
		rec store.Record
		err error
	)
	for {
		switch {
		case out.Has(outRepoError) || out.Has(outEndHandle):
			return err
		case out.Has(outLoad):
			var ok bool
			rec, ok, err = m.loadFor(ctx, h, &h.mon.answered)
			out = h.fire(err, trLoaded, func() policy.Facts { return h.ours(rec, ok) })
		case out.Has(outTombstone):
			_, err = m.saveFor(ctx, h, h.snapshot(h.token, true), rec.Revision)
			out = h.fire(err, trSaved, nil)
			if errors.Is(err, store.ErrRevisionConflict) {
				// The record moved: the policy reads it again. A successor's
				// write leaves nothing of ours to release; a renewal of ours
				// that landed late (its call given up, its write applied
				// after all) still holds our generation, and gets the
				// tombstone.
				err = nil
			}
		default:
			// Ignored (already released): nothing to do.
			return nil
		}
	}
}

// fire steps h with the outcome of a repository call: ok (with facts, if
// any), a conflict, or a failure.
func (h *Lease) fire(err error, ok policy.TriggerID, facts func() policy.Facts) policy.Outputs {
	var f policy.Facts
	if err == nil && facts != nil {
		f = facts()
	}
	m := h.m
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case err == nil:
		return m.fireLocked(h, ok, f)
	case errors.Is(err, store.ErrRevisionConflict):
		return m.fireLocked(h, trConflict, 0)
	}
	return m.fireLocked(h, trRepoFailed, 0)
}
