package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rivus/collab/internal/contract"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/policy"
)

// The monitor's second half checks what the sequence of steps cannot show:
// that each trigger and its facts tell the truth about the repository
// call they report, and that the manager carries out what the step asked
// with the values the lease world gives it (see worldmodel's lease world):
//
//  1. a result fires as what the repository answered: Loaded or Saved
//     after success, Conflict after a revision conflict, RepoFailed
//     after any other error (or a failure found before the call);
//  2. every fact given is true of the record read: recordFree (no record,
//     or a tombstone), recordOurs (unreleased, with the handle's token),
//     holderDead (the platform judges its holder dead), ttlElapsed (TTL
//     has passed on the manager's monotonic clock since it first saw the
//     record's revision); an acquisition's read gives recordFree and
//     ttlElapsed whenever they hold, and a held handle's read recordOurs;
//  3. a write that arms the deadline counts it from no later than its own
//     start, and keeps the revision it wrote;
//  4. FenceTaken fires only while the handle holds the repository's fence;
//  5. the repository keeps its own contract (the store package's doc):
//     a save over a revision older than one this process already saw
//     never succeeds, nor do two saves over one revision, and a success
//     returns a newer revision;
//  6. a declared loss says why as the step shows it (lossBroke): a
//     *LossError of the handle's key and token, LostDeadline on
//     DeadlinePassed with the renewals that failed since the last success,
//     LostMoved or LostBroken on a Conflict or a fenced read that found
//     the record moved (LostBroken exactly when the record it read is a
//     broken tombstone), LostRenewalFailed on RepoFailed, and LostPolicy
//     on any other trigger.
//
// The edge functions below make every repository call of the drivers, and
// note each answer, in monitored builds only.

// answer is how the repository answered a handle's last call.
type answer uint8

const (
	answerNone     answer = iota // no call answered since the last one was asked for
	answerLoaded                 // a load succeeded
	answerSaved                  // a save succeeded
	answerConflict               // a save met a revision conflict
	answerFailed                 // the call failed otherwise
)

// monitoredCall is one answered repository call, as the edge saw it.
type monitoredCall struct {
	answer     answer
	rec        store.Record // the record a load returned
	ok         bool         // whether it existed
	rev        store.Revision
	start, end time.Duration // on the manager's monotonic clock
}

// answerOf classifies a call's error; ok is the answer of a success.
func answerOf(err error, ok answer) answer {
	switch {
	case err == nil:
		return ok
	case errors.Is(err, store.ErrRevisionConflict):
		return answerConflict
	}
	return answerFailed
}

// loadFor reads h's key for a driver; a monitored build notes the answer:
// as the read under the fence, or as the answer to the policy's call.
func (m *Manager) loadFor(ctx context.Context, h *Lease, underFence bool) (store.Record, bool, error) {
	if !monitoring {
		return m.cfg.Repository.Load(ctx, h.key)
	}
	start := m.now()
	rec, ok, err := m.cfg.Repository.Load(ctx, h.key)
	if err == nil && ok {
		storeSeen(m.cfg.Repository, h.key, rec.Revision)
	}
	slot := &h.mon.answered
	if underFence {
		slot = &h.mon.fenceRead
	}
	m.mu.Lock()
	*slot = monitoredCall{answer: answerOf(err, answerLoaded), rec: rec, ok: ok, start: start, end: m.now()}
	m.mu.Unlock()
	return rec, ok, err
}

// saveFor writes s over expected for h.
func (m *Manager) saveFor(ctx context.Context, h *Lease, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	if !monitoring {
		return m.cfg.Repository.Save(ctx, h.key, s, expected)
	}
	revs, errs := m.monitoredSave(ctx, []renewal{{h: h, write: store.Write{Key: h.key, Snapshot: s, Expected: expected}}})
	return revs[0], errs[0]
}

// monitoredSave makes the batch's writes as save does, checks the
// repository's answers against its contract, and notes them on the
// handles.
func (m *Manager) monitoredSave(ctx context.Context, batch []renewal) ([]store.Revision, []error) {
	floors := make([]store.Revision, len(batch))
	for i, r := range batch {
		floors[i] = storeFloor(m.cfg.Repository, r.write.Key)
	}
	start := m.now()
	revs, errs := m.saveBatch(ctx, batch)
	end := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, r := range batch {
		w, rev, err := r.write, revs[i], errs[i]
		broke := storeAnswerBroke(w, floors[i], rev, err)
		if err == nil && storeSavedOver(m.cfg.Repository, w.Key, w.Expected, rev) && broke == "" {
			broke = fmt.Sprintf("the repository let a second save over revision %d succeed: its compare-and-swap lost an update", w.Expected)
		} else if ce, ok := errors.AsType[*store.RevisionConflictError](err); ok {
			storeSeen(m.cfg.Repository, w.Key, ce.Actual)
		}
		if broke != "" {
			contract.Fail(r.h.mon.report(m.pol, r.h.key, broke))
		}
		r.h.mon.answered = monitoredCall{answer: answerOf(err, answerSaved), rev: rev, start: start, end: end}
	}
	return revs, errs
}

// storeAnswerBroke returns the store contract a save's answer broke, or
// "": floor is the newest revision of the key this process had seen when
// the save began.
func storeAnswerBroke(w store.Write, floor, rev store.Revision, err error) string {
	switch {
	case err != nil:
		return ""
	case w.Expected < floor:
		return fmt.Sprintf("the repository let a save over revision %d succeed after revision %d of the key had been seen: its compare-and-swap let a stale write through", w.Expected, floor)
	case rev <= w.Expected:
		return fmt.Sprintf("the repository answered a save over revision %d with revision %d, not a newer one", w.Expected, rev)
	}
	return ""
}

// takeFence takes h's fence, watching for its loss where the repository
// can tell; a monitored build counts the fences h holds.
func (h *Lease) takeFence(ctx context.Context) (unlock func(), lost <-chan struct{}, err error) {
	if w, ok := h.m.cfg.Repository.(store.FenceWatcher); ok {
		unlock, lost, err = w.FenceWatch(ctx, h.key)
	} else {
		unlock, err = h.m.cfg.Repository.Fence(ctx, h.key)
	}
	if !monitoring || err != nil {
		return unlock, lost, err
	}
	m, release := h.m, unlock
	m.mu.Lock()
	h.mon.fences++
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		h.mon.fences--
		m.mu.Unlock()
		release()
	}, lost, nil
}

// checkEdgeLocked checks duties 1 to 4 for the step of h on trigger t
// with facts f, which gave r, and returns the one broken, or "".
func (m *Manager) checkEdgeLocked(h *Lease, t policy.TriggerID, f policy.Facts, r policy.Result) string {
	mon := h.mon
	c := &mon.answered
	want := answerNone
	switch t {
	case policy.LeaseLoaded:
		want = answerLoaded
	case policy.LeaseSaved:
		want = answerSaved
	case policy.LeaseConflict:
		want = answerConflict
	case policy.LeaseRepoFailed:
		if c.answer != answerNone && c.answer != answerFailed {
			return fmt.Sprintf("RepoFailed fired, but the repository answered %s", c.answer)
		}
	case policy.LeaseFenceTaken:
		if mon.fences == 0 {
			return "FenceTaken fired while the handle holds no fence"
		}
		c, want = &mon.fenceRead, answerLoaded
	default:
		return ""
	}
	if want != answerNone && c.answer != want {
		return fmt.Sprintf("%s fired, but the repository answered %s", leaseFamily.TriggerName(t), c.answer)
	}
	defer func() { *c = monitoredCall{} }() // the answer is taken
	switch {
	case t == policy.LeaseLoaded || t == policy.LeaseFenceTaken:
		return m.checkFactsLocked(h, c, f)
	case t == policy.LeaseSaved && !mon.returned:
		delete(m.mon.seen, h.key) // as the manager forgets its sighting on a claim
		fallthrough
	case t == policy.LeaseSaved:
		if r.Verdict == policy.Fired && r.Outputs.Has(policy.LeaseOutputArmDeadline) && (h.step.WriteStart > c.start || h.step.Wrote != c.rev) {
			return fmt.Sprintf("the deadline counts from %v with revision %d, after the start %v of the write that returned revision %d", h.step.WriteStart, h.step.Wrote, c.start, c.rev)
		}
	}
	return ""
}

// lossBroke checks duty 6 for h, declared lost on trigger t, before
// the step's own answer is counted.
func (mon *leaseMonitor) lossBroke(h *Lease, t policy.TriggerID) string {
	loss, ok := errors.AsType[*LossError](h.err)
	if !ok || loss.Key != h.key || loss.Token != h.token {
		return fmt.Sprintf("the handle was declared lost with %v, not a *LossError of its key and token %d", h.err, h.token)
	}
	want, failed := LostPolicy, mon.failedRenewals
	switch t {
	case policy.LeaseDeadlinePassed:
		want = LostDeadline
	case policy.LeaseConflict, policy.LeaseFenceTaken:
		want = LostMoved
		if loss.Record != nil && loss.Record.Broken {
			want = LostBroken
		}
	case policy.LeaseRepoFailed:
		want, failed = LostRenewalFailed, failed+1
	}
	switch {
	case loss.Cause != want:
		return fmt.Sprintf("a loss on %s says its cause is %v, not %v (record %v)", leaseFamily.TriggerName(t), loss.Cause, want, loss.Record)
	case (want == LostDeadline || want == LostRenewalFailed) && loss.FailedRenewals != failed:
		return fmt.Sprintf("a loss on %s counts %d failed renewals; %d failed since the last success", leaseFamily.TriggerName(t), loss.FailedRenewals, failed)
	}
	return ""
}

// checkFactsLocked checks the facts f of the record read by call c for h.
func (m *Manager) checkFactsLocked(h *Lease, c *monitoredCall, f policy.Facts) string {
	rec := c.rec.Snapshot
	free := !c.ok || rec.Released
	ours := !free && rec.Generation == h.token && h.mon.returned
	switch {
	case f.Has(policy.LeaseFactRecordFree) && !free:
		return "recordFree given for a record with a live holder"
	case f.Has(policy.LeaseFactRecordOurs) != ours && (h.mon.returned || f.Has(policy.LeaseFactRecordOurs)):
		return fmt.Sprintf("recordOurs is %v for generation %d (released %v) and the handle's token %d", f.Has(policy.LeaseFactRecordOurs), rec.Generation, rec.Released, h.token)
	case f.Has(policy.LeaseFactHolderDead) && (free || m.p.Process.Judge(rec.Holder).Liveness != platform.Dead):
		return fmt.Sprintf("holderDead given for holder %v, which the platform does not judge dead", rec.Holder)
	case h.mon.returned:
		return "" // a held handle's reads give recordOurs only
	case free != f.Has(policy.LeaseFactRecordFree):
		return "an acquisition's read of a free record lacks recordFree"
	case free:
		delete(m.mon.seen, h.key)
		return ""
	case f.Has(policy.LeaseFactHolderLocal) == (m.p.Process.Judge(rec.Holder).Liveness == platform.Remote):
		return fmt.Sprintf("holderLocal is %v for holder %v, whom the platform judges %v", f.Has(policy.LeaseFactHolderLocal), rec.Holder, m.p.Process.Judge(rec.Holder).Liveness)
	}
	// The manager's reading of its clock lies between the end of the read
	// and now: bound the time since the sighting both ways.
	now := m.now()
	if m.mon.seen == nil {
		m.mon.seen = map[string]monitoredSighting{}
	}
	s, ok := m.mon.seen[h.key]
	if !ok || s.rev != c.rec.Revision {
		s = monitoredSighting{rev: c.rec.Revision, from: c.end, to: now}
		m.mon.seen[h.key] = s
	}
	limit := max(rec.TTL, m.cfg.TTL)
	switch {
	case f.Has(policy.LeaseFactTtlElapsed) && now-s.from < limit:
		return fmt.Sprintf("ttlElapsed given %v after the first sighting of revision %d, before the TTL %v", now-s.from, s.rev, limit)
	case !f.Has(policy.LeaseFactTtlElapsed) && c.end-s.to >= limit:
		return fmt.Sprintf("ttlElapsed missing %v after the first sighting of revision %d, past the TTL %v", c.end-s.to, s.rev, limit)
	}
	return ""
}

// managerMonitor is the monitor's state of a whole manager, under its
// lock.
type managerMonitor struct {
	seen map[string]monitoredSighting // first sightings by acquisitions' reads, by key
}

// monitoredSighting bounds when the manager first saw revision rev.
type monitoredSighting struct {
	rev      store.Revision
	from, to time.Duration
}

func (a answer) String() string {
	switch a {
	case answerLoaded:
		return "a record"
	case answerSaved:
		return "a saved revision"
	case answerConflict:
		return "a revision conflict"
	case answerFailed:
		return "a failure"
	}
	return "nothing (no call answered)"
}
