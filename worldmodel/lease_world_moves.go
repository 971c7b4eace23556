package worldmodel

import (
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
	life := h.life
	if life == leaseLifeNone && int(w.recGen) < m.b.Generations {
		m.emit(pw, w, i, leaseMvAcquire, yield)
	}
	if life == leaseLifeReturned && h.flags&leaseClosed == 0 && h.op == leaseOpNone {
		m.emit(pw, w, i, leaseMvClose, yield)
	}
	if h.fcall != leaseFenceIdle || life == leaseLifeReturned {
		m.fenceMoves(pw, w, i, yield)
	}
	if h.flags&leaseRenew != 0 {
		m.emit(pw, w, i, leaseMvRenewDue, yield)
	}
	if h.flags&leaseArmed != 0 {
		m.emit(pw, w, i, leaseMvDeadlinePassed, yield)
	}
	if h.op != leaseOpNone {
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
		if h.life == leaseLifeReturned {
			m.emit(pw, w, i, leaseMvRunFenced, yield)
		}
	case leaseFenceWaiting:
		if w.fence == 0 {
			m.emit(pw, w, i, leaseMvFenceTaken, yield)
		}
		if h.flags&leaseLostF != 0 || h.life == leaseLifeEnded {
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
	case h.op == leaseOpLoad:
		m.emit(pw, w, i, leaseMvLoaded, yield)
		if h.flags&(leaseSeen|leaseTTL) == leaseSeen {
			m.emit(pw, w, i, leaseMvLoadedTTL, yield)
		}
	case m.current(h):
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

// current reports whether the revision h's write is over is the record's.
func (m *leaseModel) current(h *leaseHolder) bool {
	if h.op == leaseOpRenew {
		return h.flags&leaseWFresh != 0
	}
	return h.flags&leaseLFresh != 0
}

// emit applies move mv of holder i to a copy of w and yields it. pw is w
// packed: only what the move changed is packed again.
func (m *leaseModel) emit(pw *LeaseWorld, w *leaseVars, i int, mv leaseMove, yield func(string, LeaseWorld)) {
	nw := *w
	m.apply(&nw, i, mv)
	if nw.others {
		yield(m.labels[i][mv], nw.pack())
		return
	}
	lo, hi := pw.words()
	lo, hi = leaseSetHolder(lo, hi, i, nw.h[i].word())
	yield(m.labels[i][mv], leaseWorldOf(lo, hi&0xffffffff|nw.recordWord()<<32))
}

// apply carries out move mv of holder i.
func (m *leaseModel) apply(w *leaseVars, i int, mv leaseMove) {
	h := &w.h[i]
	switch mv {
	case leaseMvAcquire:
		h.life = leaseLifeAcquiring
		m.fire(w, i, leaseTAcquire, 0, leaseOpNone)
	case leaseMvClose:
		h.flags |= leaseClosed
		m.fire(w, i, leaseTRelease, 0, leaseOpNone)
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
		m.fire(w, i, leaseTRenewDue, 0, leaseOpNone)
	case leaseMvDeadlinePassed:
		m.deadlinePassed(w, i)
	case leaseMvLag:
		h.flags |= leaseLag
	case leaseMvCrash:
		if w.fence == uint8(i+1) {
			w.fence = 0
		}
		*h = leaseHolder{st: m.init, flags: leaseCrashed}
	default:
		m.result(w, i, mv)
	}
	m.tidy(w, i)
}

// result delivers the result of holder i's repository call.
func (m *leaseModel) result(w *leaseVars, i int, mv leaseMove) {
	h := &w.h[i]
	op := h.op
	h.op = leaseOpNone
	switch mv {
	case leaseMvLoaded:
		m.loaded(w, i)
	case leaseMvLoadedTTL:
		m.ttlPassed(w, i)
		m.loaded(w, i)
	case leaseMvSaved:
		m.write(w, i, op, true)
		m.fire(w, i, leaseTSaved, 0, op)
	case leaseMvConflict:
		m.fire(w, i, leaseTConflict, 0, op)
		if op == leaseOpRenew && h.life == leaseLifeReturned && h.flags&(leaseLostF|leaseClosed) == 0 {
			w.setFault(leaseFaultConflict, i, h.gen)
		}
	case leaseMvFailed:
		m.fire(w, i, leaseTRepoFailed, 0, op)
	case leaseMvFailedApplied:
		m.write(w, i, op, false)
		m.fire(w, i, leaseTRepoFailed, 0, op)
	}
}

// ttlPassed lets TTL pass for observer i since its manager first saw the
// current revision: by then every armed holder's deadline has passed,
// unless the holder's clock lagged (see the time comment above).
func (m *leaseModel) ttlPassed(w *leaseVars, i int) {
	w.h[i].flags |= leaseTTL
	w.others = true
	for k := range m.n {
		if w.h[k].flags&(leaseArmed|leaseLag) == leaseArmed {
			w.h[k].flags |= leaseDue
		}
	}
}

// loaded reads the record for holder i, notes a revision new to its
// manager, and fires Loaded. An acquisition that finds the key free, its
// holder dead or its revision silent for TTL must claim it.
func (m *leaseModel) loaded(w *leaseVars, i int) {
	h := &w.h[i]
	h.flags |= leaseLFresh
	if h.flags&leaseSeen == 0 {
		h.flags = h.flags&^leaseTTL | leaseSeen
	}
	f := m.facts(w, i)
	acquiring := h.life == leaseLifeAcquiring
	out := m.fire(w, i, leaseTLoaded, f, leaseOpLoad)
	if acquiring && f&leaseTakeoverFacts != 0 && out&leaseOClaim == 0 {
		w.setFault(leaseFaultRefused, i, uint8(f))
	}
}

// fenceTaken gives holder i's RunFenced call the fence, re-reads the record
// and fires FenceTaken, whose step must answer the call.
func (m *leaseModel) fenceTaken(w *leaseVars, i int) {
	h := &w.h[i]
	w.fence = uint8(i + 1)
	h.fcall = leaseFenceTaken
	m.fire(w, i, leaseTFenceTaken, m.facts(w, i), leaseOpNone)
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
	h.flags &^= leaseArmed | leaseDue | leaseLag
	m.fire(w, i, leaseTDeadlinePassed, 0, leaseOpNone)
	if h.life == leaseLifeReturned && h.flags&(leaseLostF|leaseClosed) == 0 {
		w.setFault(leaseFaultDeadline, i, h.gen)
	}
}

// facts computes the facts of the record as holder i's manager reads it.
func (m *leaseModel) facts(w *leaseVars, i int) policy.Facts {
	h := &w.h[i]
	var f policy.Facts
	if w.recBy == 0 || w.recFree != 0 {
		f |= leaseFFree
	} else {
		k := int(w.recBy) - 1
		if w.h[k].flags&leaseCrashed != 0 && m.sameTable(i, k) {
			f |= leaseFDead
		}
		if k == i && h.life == leaseLifeReturned && w.recGen == h.gen {
			f |= leaseFOurs
		}
	}
	if h.flags&(leaseSeen|leaseTTL) == leaseSeen|leaseTTL {
		f |= leaseFTTL
	}
	return f
}

func (m *leaseModel) sameTable(i, k int) bool { return (i < m.local) == (k < m.local) }

// write applies holder i's write op to the record; known says whether the
// holder learns the new revision (Saved) or not (a failure after all).
func (m *leaseModel) write(w *leaseVars, i int, op uint8, known bool) {
	h := &w.h[i]
	if h.gen < w.recGen {
		w.setFault(leaseFaultGenBack, i, w.recGen)
	}
	if op == leaseOpClaim {
		if h.gen <= w.top {
			w.setFault(leaseFaultGenRepeat, i, h.gen)
		}
		m.checkTakeover(w, i)
		w.top = max(w.top, h.gen)
	}
	w.recGen, w.recBy, w.recFree = h.gen, uint8(i+1), 0
	if op == leaseOpTombstone {
		w.recFree = 1
	}
	for k := range m.n {
		w.h[k].flags &^= leaseLFresh | leaseWFresh | leaseSeen | leaseTTL
	}
	w.others = true
	if known {
		h.flags |= leaseWFresh
	}
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
	if v.life == leaseLifeReturned && v.gen == w.recGen && v.flags&(leaseArmed|leaseDue|leaseLag) == leaseArmed {
		w.setFault(leaseFaultEarly, i, uint8(k))
	}
}

// fire steps holder i's handle with trigger t and facts f and carries out
// the outputs; done is the repository call whose result t reports. It
// returns the outputs.
func (m *leaseModel) fire(w *leaseVars, i int, t policy.TriggerID, f policy.Facts, done uint8) policy.Outputs {
	h := &w.h[i]
	r := m.p.Step(policy.StateID(h.st), t, f)
	switch {
	case r.Verdict == policy.Ignored:
		return 0
	case r.Verdict != policy.Fired:
		w.setFault(leaseFaultRejected, i, uint8(t))
		return 0
	case int(r.Next) >= len(m.states):
		w.setFault(leaseFaultOutputs, i, leaseArgBadState)
		return 0
	}
	h.st = uint8(r.Next)
	m.carry(w, i, r.Outputs, t, done)
	return r.Outputs
}

// carry carries out holder i's outputs in the family's order, as the
// manager does after a step fired by trigger t.
func (m *leaseModel) carry(w *leaseVars, i int, out policy.Outputs, t policy.TriggerID, done uint8) {
	h := &w.h[i]
	if out&leaseOStopTimers != 0 {
		h.flags &^= leaseTimerBits
	}
	if out&leaseOCalls != 0 {
		m.calls(w, i, out, t)
	}
	if out&leaseOArmDeadline != 0 {
		h.flags |= leaseArmed
		if t == leaseTSaved && (done == leaseOpClaim || done == leaseOpRenew) {
			h.flags &^= leaseDue | leaseLag
		} else {
			h.flags |= leaseLag // it started at an unknown earlier moment
		}
	}
	if out&leaseOSchedule != 0 {
		h.flags |= leaseRenew
	}
	if out&leaseODeclareLost != 0 {
		h.flags = h.flags&^leaseTimerBits | leaseLostF
	}
	if out&leaseOFenceAnswers != 0 {
		m.answerFence(w, i, out, t)
	}
	if out&leaseOReturns != 0 {
		m.returns(w, i, out, t, done)
	}
	if l := h.life; (l == leaseLifeNone || l == leaseLifeEnded) && h.op != leaseOpNone {
		w.setFault(leaseFaultOutputs, i, leaseArgCallLeft)
	}
}

// calls issues the repository calls among out.
func (m *leaseModel) calls(w *leaseVars, i int, out policy.Outputs, t policy.TriggerID) {
	h := &w.h[i]
	if out&leaseOLoad != 0 {
		m.issue(w, i, leaseOpLoad, leaseOLoad)
	}
	if out&leaseOClaim != 0 {
		if h.life != leaseLifeAcquiring || t != leaseTLoaded {
			w.setFault(leaseFaultOutputs, i, leaseOutputBit(leaseOClaim))
		} else {
			if w.recGen >= leaseMaxGeneration {
				panic("worldmodel: lease world: generation beyond the packed world's range; see leaseMaxGeneration")
			}
			h.gen = w.recGen + 1
			m.issue(w, i, leaseOpClaim, leaseOClaim)
		}
	}
	if out&leaseORenew != 0 {
		if h.life != leaseLifeReturned {
			w.setFault(leaseFaultOutputs, i, leaseOutputBit(leaseORenew))
		} else {
			m.issue(w, i, leaseOpRenew, leaseORenew)
		}
	}
	if out&leaseOTombstone != 0 {
		if h.life != leaseLifeReturned || t != leaseTLoaded {
			w.setFault(leaseFaultOutputs, i, leaseOutputBit(leaseOTombstone))
		} else {
			m.issue(w, i, leaseOpTombstone, leaseOTombstone)
		}
	}
}

// issue starts repository call op for holder i, the only one in flight.
func (m *leaseModel) issue(w *leaseVars, i int, op uint8, o policy.Outputs) {
	h := &w.h[i]
	if h.op != leaseOpNone {
		w.setFault(leaseFaultOutputs, i, leaseOutputBit(o))
		return
	}
	h.op = op
}

// answerFence carries out the answer to the RunFenced call that holds the
// fence: exactly one of runFenced and refuseFenced, in FenceTaken's step.
func (m *leaseModel) answerFence(w *leaseVars, i int, out policy.Outputs, t policy.TriggerID) {
	h := &w.h[i]
	answer := out & leaseOFenceAnswers
	switch {
	case t != leaseTFenceTaken:
		w.setFault(leaseFaultOutputs, i, leaseOutputBit(answer&-answer))
	case answer == leaseOFenceAnswers:
		w.setFault(leaseFaultOutputs, i, leaseArgNoAnswer)
	case answer == leaseORunFenced:
		m.startWork(w, i)
	default:
		h.fcall = leaseFenceIdle
		w.fence = 0
	}
}

// startWork starts holder i's fenced work under the fence it holds: only
// for a handle that has not declared itself lost, with the token the
// record holds.
func (m *leaseModel) startWork(w *leaseVars, i int) {
	h := &w.h[i]
	switch {
	case h.flags&leaseLostF != 0:
		w.setFault(leaseFaultLostWork, i, h.gen)
	case h.life != leaseLifeReturned || w.recBy != uint8(i+1) || w.recFree != 0 || w.recGen != h.gen:
		w.setFault(leaseFaultStale, i, h.gen)
	}
	h.fcall = leaseFenceWorking
}

// returns carries out the answers to the handle's pending Acquire or Close.
func (m *leaseModel) returns(w *leaseVars, i int, out policy.Outputs, t policy.TriggerID, done uint8) {
	h := &w.h[i]
	if out&leaseOAcquired != 0 {
		if h.life != leaseLifeAcquiring || t != leaseTSaved || done != leaseOpClaim {
			w.setFault(leaseFaultOutputs, i, leaseOutputBit(leaseOAcquired))
		} else {
			h.life = leaseLifeReturned
		}
	}
	if out&leaseOHeldError != 0 {
		if h.life != leaseLifeAcquiring {
			w.setFault(leaseFaultOutputs, i, leaseOutputBit(leaseOHeldError))
		} else {
			h.life = leaseLifeNone
		}
	}
	if out&leaseORepoError != 0 {
		switch {
		case h.life == leaseLifeAcquiring:
			h.life = leaseLifeNone
		case h.life != leaseLifeReturned || h.flags&leaseClosed == 0:
			w.setFault(leaseFaultOutputs, i, leaseOutputBit(leaseORepoError))
		}
	}
	if out&leaseOEndHandle != 0 {
		if h.life != leaseLifeReturned {
			w.setFault(leaseFaultOutputs, i, leaseOutputBit(leaseOEndHandle))
		} else {
			h.life = leaseLifeEnded
			h.flags &^= leaseTimerBits | leaseClosed // Close has returned
		}
	}
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
	if l := h.life; l != leaseLifeNone && l != leaseLifeEnded || h.fcall != leaseFenceIdle || h.op != leaseOpNone || w.fault != leaseFaultNone {
		return
	}
	*h = leaseHolder{st: m.init, flags: h.flags & (leaseCrashed | leaseSeen | leaseTTL)}
}

// setFault records the first fault of a move.
func (w *leaseVars) setFault(f leaseFault, i int, arg uint8) {
	if w.fault == leaseFaultNone {
		w.fault, w.faultAt, w.faultArg = f, uint8(i+1), arg
	}
}
