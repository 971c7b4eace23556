package worldmodel

import (
	"math/bits"

	"github.com/rivus/collab/policy"
)

// next yields every move of w: per key a wake, a cancel (if the key has an
// entry), its activation ending and its turn timeout (while one runs); then
// Close in every distinct order, and the callers stopping.
func (m *laneModel) next(w LaneWorld, yield func(string, LaneWorld)) {
	if w.bad != laneOK {
		return
	}
	for k := range m.keys {
		l, lb := &w.lanes[k], &m.labels[k]
		if !w.quiet {
			n := w
			m.wake(&n, k)
			yield(lb.wake, m.settle(n))
			if l.entry {
				n = w
				m.drop(&n, k, laneTrigCancel)
				yield(lb.cancel, m.settle(n))
			}
		}
		if l.acts > 0 {
			n := w
			m.end(&n, k)
			yield(lb.end, m.settle(n))
			if l.timer {
				n = w
				m.timeout(&n, k)
				yield(lb.timeout, m.settle(n))
			}
		}
	}
	if w.quiet {
		return
	}
	if !w.closed {
		for i := range m.closeOrders {
			if m.distinctOrder(&w, &m.closeOrders[i]) {
				n := w
				m.close(&n, &m.closeOrders[i])
				yield(m.closeLabels[i], m.settle(n))
			}
		}
	}
	n := w
	n.quiet = true
	yield(laneQuietLabel, n)
}

// distinctOrder reports whether order is the one the model tries among the
// orders that fire Close at w's entries alike: keys without an entry get no
// Close, so they must come last, in increasing order.
func (m *laneModel) distinctOrder(w *LaneWorld, order *[LaneMaxKeys]uint8) bool {
	last := -1
	for _, k := range order[:m.keys] {
		switch {
		case w.lanes[k].entry && last >= 0:
			return false
		case w.lanes[k].entry:
		case int(k) < last:
			return false
		default:
			last = int(k)
		}
	}
	return true
}

// settle ends a move: a lane without an entry that holds nothing is gone
// from the runtime, so its state is the initial one a new entry gets.
func (m *laneModel) settle(w LaneWorld) LaneWorld {
	for k := range m.keys {
		if l := &w.lanes[k]; !l.entry && !l.holds() {
			l.state = m.initial
		}
	}
	return w
}

// facts computes the facts as the runtime does, from the world as it is.
func (m *laneModel) facts(w *LaneWorld) policy.Facts {
	places := int(w.qlen)
	for k := range m.keys {
		if w.lanes[k].reserved {
			places++
		}
	}
	var f policy.Facts
	if w.qlen == 0 {
		f |= policy.LaneFactQueueEmpty
		if m.slotFree(w) {
			f |= policy.LaneFactSlotFree
		}
	}
	if m.maxQueued == 0 || places < m.maxQueued {
		f |= policy.LaneFactQueueRoom
	}
	return f
}

// slotFree reports whether fewer than MaxConcurrent slots are in use.
func (m *laneModel) slotFree(w *LaneWorld) bool {
	used := 0
	for k := range m.keys {
		used += int(w.lanes[k].slots)
	}
	return used < m.maxConc
}

// wake is lanes.Wake(k).
func (m *laneModel) wake(w *LaneWorld, k int) {
	l := &w.lanes[k]
	if !l.entry {
		l.entry, l.state = true, m.initial
		if w.closed && !m.drop(w, k, laneTrigClose) {
			return
		}
	}
	f := m.facts(w)
	r := m.p.Step(l.state, laneTrigWake, f)
	switch {
	case r.Verdict == policy.Rejected:
		if !w.closed {
			w.fail(laneBadErrClosed, k, 0)
		}
		return
	case r.Verdict != policy.Fired || bits.OnesCount64(uint64(r.Outputs&laneAnswers)) != 1:
		w.fail(laneBadNoAnswer, k, 0)
		return
	}
	owed := l.owed
	if r.Outputs&laneAccepted != 0 {
		l.owed = true
		m.syncWait(w, k)
	}
	l.state = r.Next
	started, reported := m.apply(w, k, laneTrigWake, r.Outputs)
	switch {
	case w.bad != laneOK:
	case reported:
		w.fail(laneBadSpuriousReport, k, uint8(laneTrigWake))
	default:
		w.fail(laneWakeLie(r.Outputs, started, owed, f.Has(policy.LaneFactQueueRoom)), k, 0)
		m.grant(w)
	}
}

// laneWakeLie checks Wake's answer against what the step did, given
// whether the lane owed an activation before and whether the queue had
// room; it returns laneOK for a true answer.
func laneWakeLie(out policy.Outputs, started, owed, room bool) laneBad {
	switch {
	case out.Has(policy.LaneOutputStarted) && !started:
		return laneBadStartedLie
	case out&(policy.LaneOutputQueued|policy.LaneOutputCoalesced) != 0 && started:
		return laneBadOwedLie
	case out.Has(policy.LaneOutputQueued) && owed:
		return laneBadQueuedLie
	case out.Has(policy.LaneOutputCoalesced) && !owed:
		return laneBadCoalescedLie
	case out.Has(policy.LaneOutputQueueFull) && owed:
		return laneBadFullOwedLie
	case out.Has(policy.LaneOutputQueueFull) && room:
		return laneBadFullLie
	}
	return laneOK
}

// close is lanes.Close, firing Close at the entries in the given order.
func (m *laneModel) close(w *LaneWorld, order *[LaneMaxKeys]uint8) {
	w.closed = true
	for _, k := range order[:m.keys] {
		if w.lanes[k].entry && !m.drop(w, int(k), laneTrigClose) {
			return
		}
	}
}

// drop fires Cancel or Close at k. Both drop what k owes, so the ghost no
// longer owes it, and must report that; both must leave a running
// activation interrupted. It reports whether the move may go on.
func (m *laneModel) drop(w *LaneWorld, k int, t policy.TriggerID) bool {
	l := &w.lanes[k]
	owed := l.owed
	l.owed = false
	m.syncWait(w, k)
	out, ok := m.fire(w, k, t)
	if !ok {
		return false
	}
	_, reported := m.apply(w, k, t, out)
	switch {
	case w.bad != laneOK:
	case owed && !reported:
		w.fail(laneBadUnreported, k, uint8(t))
	case reported && !owed:
		w.fail(laneBadSpuriousReport, k, uint8(t))
	case l.acts > 0 && !l.interrupted:
		w.fail(laneBadUninterrupted, k, uint8(t))
	default:
		m.grant(w)
	}
	return w.bad == laneOK
}

// end is k's activation returning, after its OnExit ran.
func (m *laneModel) end(w *LaneWorld, k int) {
	l := &w.lanes[k]
	l.acts--
	l.timer, l.interrupted = false, false
	m.syncWait(w, k)
	m.internal(w, k, laneTrigEnded)
}

// timeout is the turn timeout of k's running activation passing.
func (m *laneModel) timeout(w *LaneWorld, k int) {
	l := &w.lanes[k]
	l.timer = false
	m.internal(w, k, laneTrigTimeout)
	if l.acts > 0 && !l.interrupted {
		w.fail(laneBadUninterrupted, k, uint8(laneTrigTimeout))
	}
}

// internal fires a trigger that drops nothing, then grants free slots.
func (m *laneModel) internal(w *LaneWorld, k int, t policy.TriggerID) {
	out, ok := m.fire(w, k, t)
	if !ok {
		return
	}
	if _, reported := m.apply(w, k, t, out); reported {
		w.fail(laneBadSpuriousReport, k, uint8(t))
	}
	m.grant(w)
}

// grant fires SlotGranted at the queue's head while a slot is free.
func (m *laneModel) grant(w *LaneWorld) {
	for w.bad == laneOK && w.qlen > 0 && m.slotFree(w) {
		k := int(w.queue[0])
		out, ok := m.fire(w, k, laneTrigGranted)
		if !ok {
			return
		}
		if _, reported := m.apply(w, k, laneTrigGranted, out); reported {
			w.fail(laneBadSpuriousReport, k, uint8(laneTrigGranted))
		}
		if w.lanes[k].queued {
			w.fail(laneBadGrantKept, k, 0)
		}
	}
}

// fire steps k's policy on a trigger other than Wake. The runtime fires
// those only where the lane must handle them, so a refusal is a policy bug.
func (m *laneModel) fire(w *LaneWorld, k int, t policy.TriggerID) (policy.Outputs, bool) {
	l := &w.lanes[k]
	r := m.p.Step(l.state, t, m.facts(w))
	switch r.Verdict {
	case policy.Fired:
		l.state = r.Next
		return r.Outputs, true
	case policy.Ignored:
		return 0, true
	}
	w.fail(laneBadVerdict, k, uint8(t))
	w.badState = l.state
	return 0, false
}

// apply carries out the outputs of a step at k in the family's order, and
// reports whether it started an activation and reported one interrupted.
func (m *laneModel) apply(w *LaneWorld, k int, t policy.TriggerID, out policy.Outputs) (started, reported bool) {
	l := &w.lanes[k]
	for o := uint64(out); o != 0 && w.bad == laneOK; o &= o - 1 {
		switch policy.Outputs(1) << bits.TrailingZeros64(o) {
		case policy.LaneOutputDequeue:
			if !l.queued {
				w.fail(laneBadDequeue, k, 0)
			}
			w.unqueue(k)
		case policy.LaneOutputUnreserve:
			if !l.reserved {
				w.fail(laneBadUnreserve, k, 0)
			}
			l.reserved = false
		case policy.LaneOutputInterrupt:
			l.interrupted = l.acts > 0
		case policy.LaneOutputReleaseSlot:
			if l.slots == 0 {
				w.fail(laneBadRelease, k, 0)
				break
			}
			l.slots--
		case policy.LaneOutputReserve:
			if l.reserved {
				w.fail(laneBadReserve, k, 0)
			}
			l.reserved = true
		case policy.LaneOutputEnqueue:
			if l.queued {
				w.fail(laneBadEnqueue, k, 0)
				break
			}
			w.enqueue(k)
		case policy.LaneOutputStart:
			m.start(w, k)
			started = true
		case policy.LaneOutputForget:
			l.entry = false
		case policy.LaneOutputReportInterrupted:
			reported = true
		case policy.LaneOutputStarted, policy.LaneOutputQueued, policy.LaneOutputCoalesced, policy.LaneOutputQueueFull:
			if t != laneTrigWake {
				w.fail(laneBadStrayAnswer, k, uint8(t))
			}
		}
	}
	return started, reported
}

// start starts an activation of k, after checking that one may start.
func (m *laneModel) start(w *LaneWorld, k int) {
	l := &w.lanes[k]
	switch pos := w.waitPos(k); {
	case w.closed:
		w.fail(laneBadStartClosed, k, 0)
	case !l.owed:
		w.fail(laneBadStartUnowed, k, 0)
	case pos > 0:
		w.fail(laneBadStartUnfair, k, w.waits[0])
	}
	l.acts++
	l.slots++
	l.timer, l.interrupted, l.owed = true, false, false
	m.syncWait(w, k)
}

// syncWait keeps the ghost wait order: k waits while it owes a wake and
// runs nothing, behind the keys whose wait began earlier.
func (m *laneModel) syncWait(w *LaneWorld, k int) {
	l := &w.lanes[k]
	switch waiting, pos := l.owed && l.acts == 0, w.waitPos(k); {
	case waiting && pos < 0:
		w.waits[w.wlen] = uint8(k)
		w.wlen++
	case !waiting && pos >= 0:
		copy(w.waits[pos:w.wlen], w.waits[pos+1:w.wlen])
		w.wlen--
		w.waits[w.wlen] = 0 // equal worlds must be equal values
	}
}

// waitPos returns k's place in the ghost wait order, or -1.
func (w *LaneWorld) waitPos(k int) int {
	for i, x := range w.waits[:w.wlen] {
		if int(x) == k {
			return i
		}
	}
	return -1
}

func (w *LaneWorld) enqueue(k int) {
	w.queue[w.qlen] = uint8(k)
	w.qlen++
	w.lanes[k].queued = true
}

// unqueue removes k from the queue, if it is there.
func (w *LaneWorld) unqueue(k int) {
	for i, x := range w.queue[:w.qlen] {
		if int(x) == k {
			copy(w.queue[i:w.qlen], w.queue[i+1:w.qlen])
			w.qlen--
			w.queue[w.qlen] = 0 // equal worlds must be equal values
			break
		}
	}
	w.lanes[k].queued = false
}
