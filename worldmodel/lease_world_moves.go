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
	if life == leasestep.LifeIdle && int(w.recGen) < m.b.Generations {
		m.emit(pw, w, i, leaseMvAcquire, yield)
	}
	if life == leasestep.LifeHeld && !h.hs.Closing && h.hs.Call == leasestep.CallNone {
		m.emit(pw, w, i, leaseMvClose, yield)
	}
	if h.fcall != leaseFenceIdle || life == leasestep.LifeHeld {
		m.fenceMoves(pw, w, i, yield)
	}
	if h.flags&leaseRenew != 0 {
		m.emit(pw, w, i, leaseMvRenewDue, yield)
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
	if m.b.Crashes && m.crashMatters(w, i) {
		m.emit(pw, w, i, leaseMvCrash, yield)
	}
}

// crashMatters reports whether a crash of holder i differs from its
// process simply never moving again, which every interleaving allows:
// only when others can see it, because the record names the process as
// its live holder (observers on its process table may prove it dead) or
// because the kernel lets go of the fence it holds.
func (m *leaseModel) crashMatters(w *leaseVars, i int) bool {
	id := uint8(i + 1)
	return w.recBy == id && w.recFree == 0 || w.fence == id
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
		if w.fence == 0 {
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
func (m *leaseModel) resultMoves(pw *LeaseWorld, w *leaseVars, i int, yield func(string, LeaseWorld)) {
	h := &w.h[i]
	switch {
	case h.hs.Call == leasestep.CallLoad:
		m.emit(pw, w, i, leaseMvLoaded, yield)
		if h.flags&(leaseSeen|leaseTTL) == leaseSeen || h.note != leaseRevNone && h.flags&leaseNoteTTL == 0 {
			m.emit(pw, w, i, leaseMvLoadedTTL, yield)
		}
	case uint8(h.hs.Write.Expected) == w.recRev():
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

// recRev is the record's revision as the world gives it to the step.
func (w *leaseVars) recRev() uint8 {
	if w.recBy == 0 {
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
	c.setRecord(nw.recordWord())
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
		if w.fence != 0 {
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
		w.fence = 0
	case leaseMvRenewDue:
		h.flags &^= leaseRenew
		leasestep.RenewDue(m.p, e, &h.hs)
	case leaseMvDeadlinePassed:
		m.deadlinePassed(w, i)
	case leaseMvLag:
		h.flags |= leaseLag
	case leaseMvCrash:
		if w.fence == uint8(i+1) {
			w.fence = 0
		}
		*h = leaseHolder{hs: leasestep.Handle[uint8]{State: m.init}, flags: leaseCrashed}
	default:
		m.result(w, i, mv)
	}
	m.tidy(w, i)
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
		if w.h[k].flags&(leaseArmed|leaseLag|leaseLate) == leaseArmed {
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
	if acquiring && truth != 0 && s.Outputs()&policy.LeaseOutputClaim == 0 {
		w.setFault(leaseFaultRefused, i, uint8(truth))
	}
}

// truth computes the takeover facts of the record for acquiring holder
// i, from the world itself, and notes the ghost's first sighting: free,
// its holder's process gone on i's process table, or TTL passed since
// i's manager's acquisitions first saw the current revision.
func (m *leaseModel) truth(w *leaseVars, i int) policy.Facts {
	h := &w.h[i]
	if w.recBy == 0 || w.recFree != 0 {
		h.flags &^= leaseSeen | leaseTTL
		return policy.LeaseFactRecordFree
	}
	var f policy.Facts
	if k := int(w.recBy) - 1; w.h[k].flags&leaseCrashed != 0 && m.sameTable(i, k) {
		f |= policy.LeaseFactHolderDead
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
	if w.recBy == 0 {
		return leasestep.Record{Free: true}
	}
	r := leasestep.Record{Revision: store.Revision(leaseRevCurrent), Generation: store.Token(w.recGen), Free: w.recFree != 0}
	if !r.Free {
		k := int(w.recBy) - 1
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
	h := &w.h[i]
	w.fence = uint8(i + 1)
	h.fcall = leaseFenceTaken
	leasestep.FenceTaken(m.p, leaseEnv{m, w, i, false}, &h.hs, m.record(w, i))
	if h.fcall == leaseFenceTaken {
		w.setFault(leaseFaultOutputs, i, leaseArgNoAnswer)
		h.fcall, w.fence = leaseFenceIdle, 0 // the world ends here; a stuck call needs no bit of its own
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

func (m *leaseModel) sameTable(i, k int) bool { return (i < m.local) == (k < m.local) }

// write applies holder i's write in flight to the record; the answer
// tells the step whether it learns the new revision. Every revision noted
// anywhere becomes stale.
func (m *leaseModel) write(w *leaseVars, i int) {
	h := &w.h[i]
	wr := h.hs.Write
	if wr.Generation > leaseMaxGeneration {
		panic("worldmodel: lease world: generation beyond the packed world's range; see leaseMaxGeneration")
	}
	gen := uint8(wr.Generation)
	if gen < w.recGen {
		w.setFault(leaseFaultGenBack, i, w.recGen)
	}
	if h.hs.Call == leasestep.CallClaim {
		if gen <= w.top {
			w.setFault(leaseFaultGenRepeat, i, gen)
		}
		m.checkTakeover(w, i)
		w.top = max(w.top, gen)
	}
	w.recGen, w.recBy, w.recFree = gen, uint8(i+1), 0
	if wr.Released {
		w.recFree = 1
	}
	for k := range m.n {
		w.h[k].stale()
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
	if w.recBy == 0 || w.recFree != 0 || int(w.recBy) == i+1 {
		return
	}
	k := int(w.recBy) - 1
	v := &w.h[k]
	if v.hs.Life == leasestep.LifeHeld && uint8(v.hs.Token) == w.recGen && v.flags&(leaseArmed|leaseDue|leaseLag) == leaseArmed {
		w.setFault(leaseFaultEarly, i, uint8(k))
	}
}

// startWork starts holder i's fenced work under the fence it holds: only
// for a handle that has not declared itself lost, with the token the
// record holds.
func (m *leaseModel) startWork(w *leaseVars, i int) {
	h := &w.h[i]
	switch {
	case h.hs.Lost:
		w.setFault(leaseFaultLostWork, i, uint8(h.hs.Token))
	case h.hs.Life != leasestep.LifeHeld || w.recBy != uint8(i+1) || w.recFree != 0 || w.recGen != uint8(h.hs.Token):
		w.setFault(leaseFaultStale, i, uint8(h.hs.Token))
	}
	h.fcall = leaseFenceWorking
}

// leaseOutputBit returns the bit index of the single output o.
func leaseOutputBit(o policy.Outputs) uint8 {
	for b := range uint8(len(leaseFamily.Outputs)) {
		if o == 1<<b {
			return b
		}
	}
	return uint8(len(leaseFamily.Outputs))
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
