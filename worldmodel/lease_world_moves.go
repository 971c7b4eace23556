package worldmodel

import (
	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/policy"
)

// next yields every move of every holder, in holder order.
func (m *leaseModel) next(w LeaseWorld, yield func(string, LeaseWorld)) {
	if w.fault() != leaseFaultNone {
		return
	}
	v := w.unpack()
	for i := range m.n {
		if v.h[i].flags&leaseCrashed == 0 {
			m.holderMoves(&w, &v, i, yield)
		}
	}
}

// holderMoves yields the moves of live holder i that its callers, its
// timers, the repository and faults could make in w.
func (m *leaseModel) holderMoves(pw *LeaseWorld, w *leaseVars, i int, yield func(string, LeaseWorld)) {
	h := &w.h[i]
	life := h.hs.Life
	if life == leasestep.LifeIdle && int(m.recOf(w, i).gen) < m.b.Generations {
		m.emit(pw, w, i, leaseMvAcquire, yield)
	}
	if life == leasestep.LifeHeld && !h.hs.Closing && h.hs.Call == leasestep.CallNone {
		m.emit(pw, w, i, leaseMvClose, yield)
	}
	if h.fcall != leaseFenceIdle || life == leasestep.LifeHeld {
		m.fenceMoves(pw, w, i, yield)
	}
	if h.flags&leaseRenew != 0 && !m.saving(w, i) {
		m.emit(pw, w, i, leaseMvRenewDue, yield)
		if i == 0 && m.second > 0 && w.h[m.second].flags&leaseRenew != 0 {
			m.emit(pw, w, i, leaseMvRenewDueBatch, yield)
		}
	}
	if h.flags&leaseArmed != 0 {
		m.emit(pw, w, i, leaseMvDeadlinePassed, yield)
	}
	if h.hs.Call != leasestep.CallNone {
		m.resultMoves(pw, w, i, yield)
	}
	if m.b.Pauses && h.flags&(leaseArmed|leaseLag) == leaseArmed {
		m.emit(pw, w, i, leaseMvLag, yield)
	}
	if m.b.Crashes && i == int(m.proc[i]) && m.crashMatters(w, i) {
		m.emit(pw, w, i, leaseMvCrash, yield)
	}
}

// saving reports whether a renewal of holder i's manager is in flight:
// the manager writes one batch at a time, and renewals that fall due
// meanwhile wait for it.
func (m *leaseModel) saving(w *leaseVars, i int) bool {
	for k := range m.n {
		if m.sameProcess(i, k) && w.h[k].hs.Call == leasestep.CallRenew {
			return true
		}
	}
	return false
}

// crashMatters reports whether a crash of holder i's process differs from
// the process simply never moving again, which every interleaving allows:
// only when others can see it, because a record names one of its handles
// as live holder (observers on its process table may prove it dead) or
// because the kernel lets go of a fence it holds.
func (m *leaseModel) crashMatters(w *leaseVars, i int) bool {
	for k := range m.n {
		id, r := uint8(k+1), m.recOf(w, k)
		if m.sameProcess(i, k) && (r.by == id && r.free == 0 || r.fence == id) {
			return true
		}
	}
	return false
}

// fenceMoves yields the moves of holder i's RunFenced call. A call that
// finds the fence free takes it at once: waiting only matters while
// another process holds it.
func (m *leaseModel) fenceMoves(pw *LeaseWorld, w *leaseVars, i int, yield func(string, LeaseWorld)) {
	h := &w.h[i]
	switch h.fcall {
	case leaseFenceIdle:
		if h.hs.Life == leasestep.LifeHeld {
			m.emit(pw, w, i, leaseMvRunFenced, yield)
		}
	case leaseFenceWaiting:
		if m.recOf(w, i).fence == 0 {
			m.emit(pw, w, i, leaseMvFenceTaken, yield)
		}
		if h.hs.Lost || h.hs.Life == leasestep.LifeEnded {
			m.emit(pw, w, i, leaseMvWaitEnds, yield)
		}
	case leaseFenceWorking:
		m.emit(pw, w, i, leaseMvWorkReturns, yield)
	}
}

// resultMoves yields the results holder i's repository call can have.
// A batch's writes are answered together, by moves of its first member.
func (m *leaseModel) resultMoves(pw *LeaseWorld, w *leaseVars, i int, yield func(string, LeaseWorld)) {
	h := &w.h[i]
	if h.flags&leaseBatched != 0 {
		if i == 0 {
			m.batchMoves(pw, w, yield)
		}
		return
	}
	switch {
	case h.hs.Call == leasestep.CallLoad:
		m.emit(pw, w, i, leaseMvLoaded, yield)
		if h.flags&(leaseSeen|leaseTTL) == leaseSeen || h.note != leaseRevNone && h.flags&leaseNoteTTL == 0 {
			m.emit(pw, w, i, leaseMvLoadedTTL, yield)
		}
	case uint8(h.hs.Write.Expected) == m.recOf(w, i).rev():
		m.emit(pw, w, i, leaseMvSaved, yield)
		if m.b.Ambiguous {
			m.emit(pw, w, i, leaseMvFailedApplied, yield)
		}
	default:
		m.emit(pw, w, i, leaseMvConflict, yield)
	}
	if m.b.Failures {
		m.emit(pw, w, i, leaseMvFailed, yield)
	}
}

// batchMoves yields the answers the batch of h0 and h0/b can have: each
// write saved or refused by its revision, failed, or failed yet applied.
func (m *leaseModel) batchMoves(pw *LeaseWorld, w *leaseVars, yield func(string, LeaseWorld)) {
	var outs [2][leaseOutcomes]bool
	for k, i := range [2]int{0, m.second} {
		ok := uint8(w.h[i].hs.Write.Expected) == m.recOf(w, i).rev()
		outs[k] = [leaseOutcomes]bool{leaseOutSaved: ok, leaseOutConflict: !ok, leaseOutFailed: m.b.Failures, leaseOutFailedApplied: ok && m.b.Ambiguous}
	}
	for a := range leaseOutcomes {
		for b := range leaseOutcomes {
			if outs[0][a] && outs[1][b] {
				m.emit(pw, w, 0, leaseMvBatch+leaseMove(a*leaseOutcomes+b), yield)
			}
		}
	}
}

// rev is the record's revision as the world gives it to the step.
func (r *leaseRecord) rev() uint8 {
	if r.by == 0 {
		return leaseRevNone
	}
	return leaseRevCurrent
}

// emit applies move mv of holder i to a copy of w and yields it. pw is w
// packed: only what the move changed is packed again.
func (m *leaseModel) emit(pw *LeaseWorld, w *leaseVars, i int, mv leaseMove, yield func(string, LeaseWorld)) {
	nw := m.scratch // the step's Env holds a pointer to it: a local would escape
	*nw = *w
	m.apply(nw, i, mv)
	if nw.others {
		yield(m.labels[i][mv], nw.pack())
		return
	}
	c := *pw
	c.setHolder(i, nw.h[i].word())
	c.setRecords(nw)
	yield(m.labels[i][mv], c)
}

// apply carries out move mv of holder i.
func (m *leaseModel) apply(w *leaseVars, i int, mv leaseMove) {
	h := &w.h[i]
	e := leaseEnv{m, w, i, false}
	switch mv {
	case leaseMvAcquire:
		leasestep.Acquire(m.p, e, &h.hs)
	case leaseMvClose:
		leasestep.Release(m.p, e, &h.hs)
	case leaseMvRunFenced:
		if m.recOf(w, i).fence != 0 {
			h.fcall = leaseFenceWaiting
			break
		}
		m.fenceTaken(w, i)
	case leaseMvFenceTaken:
		m.fenceTaken(w, i)
	case leaseMvWaitEnds:
		h.fcall = leaseFenceIdle
	case leaseMvWorkReturns:
		h.fcall = leaseFenceIdle
		m.recOf(w, i).fence = 0
	case leaseMvRenewDue:
		m.renewDue(w, i, -1)
	case leaseMvRenewDueBatch:
		m.renewDue(w, i, m.second)
	case leaseMvDeadlinePassed:
		m.deadlinePassed(w, i)
	case leaseMvLag:
		h.flags |= leaseLag
	case leaseMvCrash:
		m.crash(w, i)
	default:
		if mv >= leaseMvBatch {
			m.batchAnswered(w, mv-leaseMvBatch)
			break
		}
		m.result(w, i, mv)
	}
	m.tidy(w, i)
	if w.others && m.second > 0 {
		m.tidy(w, m.second)
	}
}

// crash ends holder i's process: every handle of it vanishes, with its
// fences and fenced work; the records stay, naming it.
func (m *leaseModel) crash(w *leaseVars, i int) {
	for k := range m.n {
		if !m.sameProcess(i, k) {
			continue
		}
		if r := m.recOf(w, k); r.fence == uint8(k+1) {
			r.fence = 0
		}
		w.h[k] = leaseHolder{hs: leasestep.Handle[uint8]{State: m.init}, flags: leaseCrashed}
		if k != i {
			w.others = true
		}
	}
}

// renewDue fires the renewal timer of holder i, and of holder j too
// (j >= 0), as the manager does, through the runtime's own CollectDue; a
// batch of two is answered together.
func (m *leaseModel) renewDue(w *leaseVars, i, j int) {
	due := m.members(w, i, j)
	n := 1
	if j >= 0 {
		n = 2
		w.others = true
	}
	for _, d := range due[:n] {
		w.h[d.Env.i].flags &^= leaseRenew
	}
	if len(leasestep.CollectDue(m.p, due[:n], nil)) == 2 {
		w.h[i].flags |= leaseBatched
		w.h[j].flags |= leaseBatched
	}
}

// members returns holders i and j of w as members of a batch.
func (m *leaseModel) members(w *leaseVars, i, j int) [2]leasestep.Member[uint8, leaseEnv] {
	due := [2]leasestep.Member[uint8, leaseEnv]{{Env: leaseEnv{m, w, i, false}, H: &w.h[i].hs}}
	if j >= 0 {
		due[1] = leasestep.Member[uint8, leaseEnv]{Env: leaseEnv{m, w, j, false}, H: &w.h[j].hs}
	}
	return due
}

// batchAnswered answers the batch of h0 and h0/b with outcome o (see
// leaseMvBatch): the store applies the writes in key order, then the
// runtime's AnswerBatch answers each; a member whose write met a conflict
// must declare the lease lost, as a lone renewal must.
func (m *leaseModel) batchAnswered(w *leaseVars, o leaseMove) {
	batch := m.members(w, 0, m.second)
	outs := [2]int{int(o) / leaseOutcomes, int(o) % leaseOutcomes}
	var answers [2]leasestep.Answer
	for k := range batch {
		i := batch[k].Env.i
		w.h[i].flags &^= leaseBatched
		switch outs[k] {
		case leaseOutSaved:
			m.write(w, i)
			answers[k] = leasestep.Answer{Result: leasestep.OK, Rev: store.Revision(leaseRevCurrent)}
			batch[k].Env.saved = true
		case leaseOutConflict:
			answers[k] = leasestep.Answer{Result: leasestep.Conflict}
		case leaseOutFailed:
			answers[k] = leasestep.Answer{Result: leasestep.Failed}
		case leaseOutFailedApplied:
			m.write(w, i)
			answers[k] = leasestep.Answer{Result: leasestep.Failed}
		}
	}
	leasestep.AnswerBatch(m.p, batch[:], answers[:], nil)
	for k, b := range batch {
		if h := b.H; outs[k] == leaseOutConflict && h.Life == leasestep.LifeHeld && !h.Lost && !h.Closing {
			w.setFault(leaseFaultConflict, b.Env.i, uint8(h.Token))
		}
	}
	w.others = true
}

// result delivers the result of holder i's repository call.
func (m *leaseModel) result(w *leaseVars, i int, mv leaseMove) {
	h := &w.h[i]
	e := leaseEnv{m, w, i, false}
	call := h.hs.Call
	switch mv {
	case leaseMvLoaded:
		m.loaded(w, i)
	case leaseMvLoadedTTL:
		m.ttlPassed(w, i)
		m.loaded(w, i)
	case leaseMvSaved:
		m.write(w, i)
		e.saved = call == leasestep.CallClaim || call == leasestep.CallRenew
		leasestep.Answered(m.p, e, &h.hs, leasestep.Answer{Result: leasestep.OK, Rev: store.Revision(leaseRevCurrent)})
	case leaseMvConflict:
		leasestep.Answered(m.p, e, &h.hs, leasestep.Answer{Result: leasestep.Conflict})
		if call == leasestep.CallRenew && h.hs.Life == leasestep.LifeHeld && !h.hs.Lost && !h.hs.Closing {
			w.setFault(leaseFaultConflict, i, uint8(h.hs.Token))
		}
	case leaseMvFailed:
		leasestep.Answered(m.p, e, &h.hs, leasestep.Answer{Result: leasestep.Failed})
	case leaseMvFailedApplied:
		m.write(w, i)
		leasestep.Answered(m.p, e, &h.hs, leasestep.Answer{Result: leasestep.Failed})
	}
}

// ttlPassed lets TTL pass for observer i since its manager's note and
// since it first saw the current revision: by then every armed holder's
// deadline has passed, unless the holder's clock lagged or its deadline
// started late (see the time comment above). A note of an older revision
// tells nothing of the current holder's deadline.
func (m *leaseModel) ttlPassed(w *leaseVars, i int) {
	h := &w.h[i]
	if h.note != leaseRevNone {
		h.flags |= leaseNoteTTL
	}
	if h.flags&leaseSeen == 0 {
		return
	}
	h.flags |= leaseTTL
	w.others = true
	for k := range m.n {
		if m.key[k] == m.key[i] && w.h[k].flags&(leaseArmed|leaseLag|leaseLate) == leaseArmed {
			w.h[k].flags |= leaseDue
		}
	}
}

// loaded answers holder i's load with the record and fires Loaded through
// the runtime's step. An acquisition that finds the key free, its holder
// dead or its revision silent for TTL since its manager first saw it (the
// ghost, not the step's note) must claim it.
func (m *leaseModel) loaded(w *leaseVars, i int) {
	h := &w.h[i]
	acquiring := h.hs.Life == leasestep.LifeAcquiring
	var truth policy.Facts
	if acquiring {
		truth = m.truth(w, i)
	}
	s := leasestep.Answered(m.p, leaseEnv{m, w, i, false}, &h.hs, leasestep.Answer{Result: leasestep.OK, Rec: m.record(w, i)})
	if acquiring && m.brokenGuarantee(truth) != "" && s.Outputs()&policy.LeaseOutputClaim == 0 {
		w.setFault(leaseFaultRefused, i, uint8(truth))
	}
}

// truth computes the takeover facts of the record for acquiring holder
// i, from the world itself, and notes the ghost's first sighting: free,
// its holder's process gone on i's process table, or TTL passed since
// i's manager's acquisitions first saw the current revision.
func (m *leaseModel) truth(w *leaseVars, i int) policy.Facts {
	h, r := &w.h[i], m.recOf(w, i)
	if r.by == 0 || r.free != 0 {
		h.flags &^= leaseSeen | leaseTTL
		return policy.LeaseFactRecordFree
	}
	var f policy.Facts
	if k := int(r.by) - 1; m.sameTable(i, k) {
		f |= policy.LeaseFactHolderLocal
		if w.h[k].flags&leaseCrashed != 0 {
			f |= policy.LeaseFactHolderDead
		}
	}
	if h.flags&(leaseSeen|leaseTTL) == leaseSeen|leaseTTL {
		f |= policy.LeaseFactTtlElapsed
	}
	h.flags |= leaseSeen
	return f
}

// record is the record as holder i's manager loads it: its holder judged
// as the platform judges (Dead on proof on i's process table, Remote on
// another).
func (m *leaseModel) record(w *leaseVars, i int) leasestep.Record {
	rec := m.recOf(w, i)
	if rec.by == 0 {
		return leasestep.Record{Free: true}
	}
	r := leasestep.Record{Revision: store.Revision(leaseRevCurrent), Generation: store.Token(rec.gen), Free: rec.free != 0}
	if !r.Free {
		k := int(rec.by) - 1
		switch {
		case !m.sameTable(i, k):
			r.Liveness = platform.Remote
		case w.h[k].flags&leaseCrashed != 0:
			r.Liveness = platform.Dead
		default:
			r.Liveness = platform.Alive
		}
	}
	return r
}

// fenceTaken gives holder i's RunFenced call the fence, re-reads the record
// and fires FenceTaken, whose step must answer the call.
func (m *leaseModel) fenceTaken(w *leaseVars, i int) {
	h, r := &w.h[i], m.recOf(w, i)
	r.fence = uint8(i + 1)
	h.fcall = leaseFenceTaken
	leasestep.FenceTaken(m.p, leaseEnv{m, w, i, false}, &h.hs, m.record(w, i))
	if h.fcall == leaseFenceTaken {
		w.setFault(leaseFaultOutputs, i, leaseArgNoAnswer)
		h.fcall, r.fence = leaseFenceIdle, 0 // the world ends here; a stuck call needs no bit of its own
	}
}

// deadlinePassed fires holder i's one-shot deadline timer. A handle still
// held after it breaks package lease's rule that the holder declares
// itself lost at its deadline.
func (m *leaseModel) deadlinePassed(w *leaseVars, i int) {
	h := &w.h[i]
	h.flags &^= leaseArmed | leaseDue | leaseLag | leaseLate
	leasestep.DeadlinePassed(m.p, leaseEnv{m, w, i, false}, &h.hs)
	if h.hs.Life == leasestep.LifeHeld && !h.hs.Lost && !h.hs.Closing {
		w.setFault(leaseFaultDeadline, i, uint8(h.hs.Token))
	}
}

func (m *leaseModel) sameTable(i, k int) bool {
	return (int(m.proc[i]) < m.local) == (int(m.proc[k]) < m.local)
}

// write applies holder i's write in flight to its key's record; the
// answer tells the step whether it learns the new revision. Every
// revision of the key noted anywhere becomes stale.
func (m *leaseModel) write(w *leaseVars, i int) {
	h, r := &w.h[i], m.recOf(w, i)
	wr := h.hs.Write
	if wr.Generation > leaseMaxGeneration {
		panic("worldmodel: lease world: generation beyond the packed world's range; see leaseMaxGeneration")
	}
	gen := uint8(wr.Generation)
	if gen < r.gen {
		w.setFault(leaseFaultGenBack, i, r.gen)
	}
	if h.hs.Call == leasestep.CallClaim {
		if gen <= r.top {
			w.setFault(leaseFaultGenRepeat, i, gen)
		}
		m.checkTakeover(w, i)
		r.top = max(r.top, gen)
	}
	r.gen, r.by, r.free = gen, uint8(i+1), 0
	if wr.Released {
		r.free = 1
	}
	for k := range m.n {
		if m.key[k] == m.key[i] {
			w.h[k].stale()
		}
	}
	w.others = true
}

// stale makes every revision h notes stale: the record has moved.
func (h *leaseHolder) stale() {
	st := func(r *store.Revision) {
		if *r == store.Revision(leaseRevCurrent) {
			*r = store.Revision(leaseRevStale)
		}
	}
	st(&h.hs.Wrote)
	st(&h.hs.Write.Expected)
	if h.note == leaseRevCurrent {
		h.note = leaseRevStale
	}
	h.flags &^= leaseSeen | leaseTTL
}

// checkTakeover judges holder i's claim, about to replace the record: the
// record's holder, if its handle still holds the lease with a deadline on
// a clock that kept time, must be past that deadline.
func (m *leaseModel) checkTakeover(w *leaseVars, i int) {
	r := m.recOf(w, i)
	if r.by == 0 || r.free != 0 || int(r.by) == i+1 {
		return
	}
	k := int(r.by) - 1
	v := &w.h[k]
	if v.hs.Life == leasestep.LifeHeld && uint8(v.hs.Token) == r.gen && v.flags&(leaseArmed|leaseDue|leaseLag) == leaseArmed {
		w.setFault(leaseFaultEarly, i, uint8(k))
	}
}

// startWork starts holder i's fenced work under the fence it holds: only
// for a handle that has not declared itself lost, with the token the
// record holds.
func (m *leaseModel) startWork(w *leaseVars, i int) {
	h, r := &w.h[i], m.recOf(w, i)
	switch {
	case h.hs.Lost:
		w.setFault(leaseFaultLostWork, i, uint8(h.hs.Token))
	case h.hs.Life != leasestep.LifeHeld || r.by != uint8(i+1) || r.free != 0 || r.gen != uint8(h.hs.Token):
		w.setFault(leaseFaultStale, i, uint8(h.hs.Token))
	}
	h.fcall = leaseFenceWorking
}

// leaseOutputBit returns the bit index of the single output o.
func leaseOutputBit(o policy.Outputs) uint8 {
	for b := range uint8(len(leaseFamily().Outputs)) {
		if o == 1<<b {
			return b
		}
	}
	return uint8(len(leaseFamily().Outputs))
}

// tidy resets holder i's handle once it is gone for good (Acquire failed,
// or the handle ended and no RunFenced call lingers), keeping the process
// and its manager's notes, so that worlds that differ only in a gone
// handle's leftovers are one world.
func (m *leaseModel) tidy(w *leaseVars, i int) {
	h := &w.h[i]
	if l := h.hs.Life; l != leasestep.LifeIdle && l != leasestep.LifeEnded || h.fcall != leaseFenceIdle || h.hs.Call != leasestep.CallNone || w.fault != leaseFaultNone {
		return
	}
	*h = leaseHolder{hs: leasestep.Handle[uint8]{State: m.init}, note: h.note, flags: h.flags & (leaseCrashed | leaseSeen | leaseTTL | leaseNoteTTL)}
}

// setFault records the first fault of a move.
func (w *leaseVars) setFault(f leaseFault, i int, arg uint8) {
	if w.fault == leaseFaultNone {
		w.fault, w.faultAt, w.faultArg = f, uint8(i+1), arg
	}
}
