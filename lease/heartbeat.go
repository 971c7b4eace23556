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

// member is a handle as a member of the lease step's batches.
type member = leasestep.Member[time.Duration, *handleEnv]

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
	start := m.now()
	revs, errs := m.save(ctx, job.batch)
	took := m.now() - start
	// Its timer goes before the batch is answered: once saving is off,
	// the manager may look settled, and must have no timer left of a
	// write that is over.
	cancel()
	seen := m.readConflicts(job, errs)
	members := make([]member, len(job.batch))
	answers := make([]leasestep.Answer, len(job.batch))
	for i, r := range job.batch {
		members[i] = member{Env: r.h.env(), H: &r.h.step}
		answers[i] = saveAnswer(revs[i], errs[i])
	}
	m.mu.Lock()
	defer m.unlockAndReport()
	for i, r := range job.batch {
		r.h.noteRenewalLocked(errs[i], seen[i])
	}
	leasestep.AnswerBatch(m.pol, members, answers, func(i int, s leasestep.Step) {
		h := job.batch[i].h
		out := m.steppedLocked(h, s)
		switch {
		case errs[i] == nil && out.Has(policy.LeaseOutputArmDeadline):
			m.emitLocked(Event{Kind: Renewed, Key: h.key, Token: h.token, took: took})
		case errs[i] != nil && out.Has(policy.LeaseOutputScheduleRetry):
			m.emitLocked(Event{Kind: RenewalFailed, Key: h.key, Token: h.token, Err: errs[i]})
		}
	})
	for _, r := range job.batch {
		r.h.loss = nil // a member the batch did not step
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
	until := now + m.lifetime()
	if at, ok := m.deadlines.next(); ok {
		until = min(until, at)
	}
	var due []member
	for h := range m.live {
		if h.heapAt[renewalTimer] != 0 && h.renewAt <= horizon {
			unsetLocked(&m.renewals, h)
			due = append(due, member{Env: h.env(), H: &h.step})
		}
	}
	// In the order of their keys, not of the map: a store locks the
	// records of a transaction in one order, and a run replays.
	slices.SortFunc(due, func(a, b member) int { return strings.Compare(a.Env.key, b.Env.key) })
	due = leasestep.CollectDue(m.pol, due, func(d member, s leasestep.Step) { m.steppedLocked(d.Env.lease(), s) })
	batch := make([]renewal, len(due))
	for i, d := range due {
		h, w := d.Env.lease(), d.H.Write
		batch[i] = renewal{h, store.Write{Key: h.key, Snapshot: h.snapshot(w.Generation, w.Released), Expected: w.Expected}}
	}
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

// readConflicts reads the record of each renewal of job that met a
// revision conflict, so that its loss can say who moved it: a successor,
// or an operator's break. The read is bounded by the earliest deadline,
// as the batch was: the deadline declares the loss anyway, so a store
// that does not answer delays nothing past it. A record that cannot be
// read is nil.
func (m *Manager) readConflicts(job saveJob, errs []error) []*store.Snapshot {
	seen := make([]*store.Snapshot, len(job.batch))
	for i, r := range job.batch {
		if conflictOf(errs[i]) == nil {
			continue
		}
		ctx, cancel := m.withTimeout(max(job.until-m.now(), time.Millisecond))
		rec, ok, err := m.cfg.Repository.Load(ctx, r.h.key)
		cancel()
		if err == nil && ok {
			seen[i] = &rec.Snapshot
		}
	}
	return seen
}

// noteRenewalLocked notes a renewal's answer err on h: a success ends its
// run of failures; a conflict (the record seen then, if read) or a
// failure is the loss its step may declare.
func (h *Lease) noteRenewalLocked(err error, seen *store.Snapshot) {
	switch c := conflictOf(err); {
	case err == nil:
		h.failedRenewals, h.lastRenewErr = 0, nil
	case c != nil:
		h.loss = movedLoss(h, c, seen)
	default:
		h.failedRenewals, h.lastRenewErr = h.failedRenewals+1, err
		h.loss = &LossError{Key: h.key, Token: h.token, Cause: LostRenewalFailed, FailedRenewals: h.failedRenewals, LastErr: err}
	}
}
