package lease

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/policy"
)

// renewal is one lease's part of a batch.
type renewal struct {
	h     *Lease
	write store.Write
}

// saveJob is a batch of renewals, and the moment past which none of them
// can help: the earliest deadline of the manager's handles.
type saveJob struct {
	batch []renewal
	until time.Duration
}

// saver writes the batches the loop hands it, one at a time, until the
// loop stops: the loop never waits for the store.
func (m *Manager) saver() {
	defer close(m.saverDone)
	for job := range m.batches {
		m.renew(job)
	}
}

// renew writes the renewals of job, in one transaction where the
// repository can, and answers each.
func (m *Manager) renew(job saveJob) {
	// A renewal that outlives the earliest deadline is useless: bound it.
	ctx, cancel := m.withTimeout(max(job.until-m.now(), time.Millisecond))
	defer cancel()
	revs, errs := m.save(ctx, job.batch)
	m.mu.Lock()
	defer m.unlockAndReport()
	for i, r := range job.batch {
		out := m.steppedLocked(r.h, leasestep.Answered(m.pol, r.h.env(), &r.h.step, saveAnswer(revs[i], errs[i])))
		switch {
		case errs[i] == nil && out.Has(policy.LeaseOutputArmDeadline):
			m.emitLocked(Event{Kind: Renewed, Key: r.h.key, Token: r.h.token})
		case errs[i] != nil && out.Has(policy.LeaseOutputScheduleRetry):
			m.emitLocked(Event{Kind: RenewalFailed, Key: r.h.key, Token: r.h.token, Err: errs[i]})
		}
	}
	m.saving = false
	m.kickLoop()
	m.cond.Broadcast()
}

// collectDueLocked fires RenewDue at the scheduled leases and returns
// their writes, and the earliest deadline of the manager's handles. Every
// scheduled lease renews with the first one due, at most a heartbeat
// early, so that leases acquired apart fall into one batch.
func (m *Manager) collectDueLocked(now time.Duration) ([]renewal, time.Duration) {
	horizon := now + m.cfg.Heartbeat
	var batch []renewal
	until := now + m.lifetime()
	if at, ok := m.deadlines.next(); ok {
		until = min(until, at)
	}
	for h := range m.live {
		if h.heapAt[renewalTimer] == 0 || h.renewAt > horizon {
			continue
		}
		// A handle with a call in flight (a Close's read) gets its
		// RenewDue too, as the lease world fires it: the timer is
		// consumed, and never falls due again and again.
		busy := h.step.Call != leasestep.CallNone
		unsetLocked(&m.renewals, h)
		m.steppedLocked(h, leasestep.RenewDue(m.pol, h.env(), &h.step))
		if busy || h.step.Call != leasestep.CallRenew {
			continue
		}
		w := h.step.Write
		batch = append(batch, renewal{h, store.Write{Key: h.key, Snapshot: h.snapshot(w.Generation, w.Released), Expected: w.Expected}})
	}
	// In the order of their keys, not of the map: a store locks the
	// records of a transaction in one order, and a run replays.
	slices.SortFunc(batch, func(a, b renewal) int { return strings.Compare(a.write.Key, b.write.Key) })
	return batch, until
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
