package lease

import (
	"context"
	"time"

	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/policy"
)

// heartbeat renews the manager's leases until Close: it sleeps until the
// earliest renewal is due, then renews every scheduled lease together, so
// that leases acquired at different moments fall into one batch.
func (m *Manager) heartbeat() {
	defer close(m.loopDone)
	for {
		var timer platform.Timer
		var tick <-chan time.Time
		if due, ok := m.nextRenewal(); ok {
			timer = m.clock.NewTimer(max(due-m.now(), 0))
			tick = timer.C()
		}
		select {
		case <-tick:
			m.renewDue()
		case <-m.kick:
		case <-m.stop:
			if timer != nil {
				timer.Stop()
			}
			return
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// nextRenewal returns when the earliest scheduled renewal is due.
func (m *Manager) nextRenewal() (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var (
		next  time.Duration
		found bool
	)
	for h := range m.live {
		if h.scheduled && (!found || h.renewAt < next) {
			next, found = h.renewAt, true
		}
	}
	return next, found
}

// renewal is one lease's part of a batch.
type renewal struct {
	h     *Lease
	write store.Write
}

// renewDue fires RenewDue at every lease due soon and writes their
// renewals, in one transaction where the repository can.
func (m *Manager) renewDue() {
	batch, deadline := m.collectDue()
	if len(batch) == 0 {
		return
	}
	// A renewal that outlives the earliest deadline is useless: bound it.
	ctx, cancel := context.WithTimeout(context.Background(), max(deadline-m.now(), time.Millisecond))
	defer cancel()
	revs, errs := m.save(ctx, batch)
	m.mu.Lock()
	defer m.unlockAndReport()
	for i, r := range batch {
		out := m.steppedLocked(r.h, leasestep.Answered(m.pol, r.h.env(), &r.h.step, saveAnswer(revs[i], errs[i])))
		switch {
		case errs[i] == nil && out.Has(policy.LeaseOutputArmDeadline):
			m.emitLocked(Event{Kind: Renewed, Key: r.h.key, Token: r.h.token})
		case errs[i] != nil && out.Has(policy.LeaseOutputScheduleRetry):
			m.emitLocked(Event{Kind: RenewalFailed, Key: r.h.key, Token: r.h.token, Err: errs[i]})
		}
	}
	m.cond.Broadcast()
}

// collectDue fires RenewDue at the scheduled leases and returns their
// writes, and the earliest of their deadlines.
func (m *Manager) collectDue() ([]renewal, time.Duration) {
	m.mu.Lock()
	defer m.unlockAndReport()
	now := m.now()
	// Every scheduled lease renews with the first one due, at most a
	// heartbeat early, so that leases acquired apart fall into one batch.
	horizon := now + m.cfg.Heartbeat
	var batch []renewal
	deadline := now + m.lifetime()
	for h := range m.live {
		if !h.scheduled || h.renewAt > horizon || h.step.Call != leasestep.CallNone {
			continue
		}
		h.scheduled = false
		if h.passDeadlineLocked(now) {
			continue
		}
		m.steppedLocked(h, leasestep.RenewDue(m.pol, h.env(), &h.step))
		if h.step.Call != leasestep.CallRenew {
			continue
		}
		w := h.step.Write
		batch = append(batch, renewal{h, store.Write{Key: h.key, Snapshot: h.snapshot(w.Generation, w.Released), Expected: w.Expected}})
		deadline = min(deadline, h.step.WriteStart+m.lifetime())
	}
	return batch, deadline
}

// save writes the batch: in one transaction where the repository is a
// store.BatchSaver, else one save at a time.
func (m *Manager) save(ctx context.Context, batch []renewal) ([]store.Revision, []error) {
	if monitoring {
		return m.monitoredSave(ctx, batch)
	}
	return m.saveBatch(ctx, batch)
}

// saveBatch makes save's repository calls.
func (m *Manager) saveBatch(ctx context.Context, batch []renewal) ([]store.Revision, []error) {
	writes := make([]store.Write, len(batch))
	for i, r := range batch {
		writes[i] = r.write
	}
	if bs, ok := m.cfg.Repository.(store.BatchSaver); ok && len(writes) > 1 {
		return bs.SaveBatch(ctx, writes)
	}
	revs, errs := make([]store.Revision, len(writes)), make([]error, len(writes))
	for i, w := range writes {
		revs[i], errs[i] = m.cfg.Repository.Save(ctx, w.Key, w.Snapshot, w.Expected)
	}
	return revs, errs
}
