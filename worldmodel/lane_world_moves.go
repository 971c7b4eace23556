package worldmodel

import (
	"github.com/rivus/collab/internal/lanestep"
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
			n := m.from(w)
			m.wake(n, k)
			yield(lb.wake, m.settle(*n))
			if l.entry {
				n = m.from(w)
				m.drop(n, k, laneTrigCancel)
				yield(lb.cancel, m.settle(*n))
			}
		}
		if l.acts > 0 {
			n := m.from(w)
			m.end(n, k)
			yield(lb.end, m.settle(*n))
			if l.timer {
				n = m.from(w)
				m.timeout(n, k)
				yield(lb.timeout, m.settle(*n))
			}
		}
	}
	if w.quiet {
		return
	}
	if !w.closed {
		for i := range m.closeOrders {
			if m.distinctOrder(&w, &m.closeOrders[i]) {
				n := m.from(w)
				m.close(n, &m.closeOrders[i])
				yield(m.closeLabels[i], m.settle(*n))
			}
		}
	}
	n := w
	n.quiet = true
	yield(laneQuietLabel, n)
}

// from copies w into the model's scratch world and returns it: a move is
// worked out there, because the runtime's step (internal/lanestep) takes
// the world through an interface, which would move a world on the stack
// to the heap on every move.
func (m *laneModel) from(w LaneWorld) *LaneWorld {
	*m.scratch = w
	return m.scratch
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
	w.started, w.reported = false, false
	for k := range m.keys {
		if l := &w.lanes[k]; !l.entry && !l.holds() {
			l.state = m.initial
		}
	}
	return w
}

// slotFree reports whether fewer than MaxConcurrent slots are in use.
func (m *laneModel) slotFree(w *LaneWorld) bool {
	return laneBook{m, w}.SlotsInUse() < m.limits.MaxConcurrent
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
	b := laneBook{m, w}
	room := lanestep.Facts[int](m.limits, b).Has(policy.LaneFactQueueRoom)
	owed := l.owed
	w.started, w.reported = false, false
	r, ok := lanestep.Step[int](m.p, m.limits, b, k, laneTrigWake)
	switch {
	case !ok:
		return
	case r.Verdict == policy.Rejected:
		if !w.closed {
			w.fail(laneBadErrClosed, k, 0)
		}
		return
	case r.Verdict != policy.Fired:
		w.fail(laneBadNoAnswer, k, 0)
		return
	case w.reported:
		w.fail(laneBadSpuriousReport, k, uint8(laneTrigWake))
	default:
		w.fail(laneWakeLie(r.Outputs, w.started, owed, room), k, 0)
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
	if !m.step(w, k, t) {
		return false
	}
	switch {
	case owed && !w.reported:
		w.fail(laneBadUnreported, k, uint8(t))
	case w.reported && !owed:
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
	if !m.step(w, k, t) {
		return
	}
	if w.reported {
		w.fail(laneBadSpuriousReport, k, uint8(t))
	}
	m.grant(w)
}

// step runs the runtime's step of t at k (package lanes runs the same
// code), noting whether it started an activation or reported one
// interrupted; it reports whether the move may go on.
func (m *laneModel) step(w *LaneWorld, k int, t policy.TriggerID) bool {
	w.started, w.reported = false, false
	_, ok := lanestep.Step[int](m.p, m.limits, laneBook{m, w}, k, t)
	return ok && w.bad == laneOK
}

// grant runs the runtime's grants of free slots to the queue.
func (m *laneModel) grant(w *LaneWorld) {
	if w.bad == laneOK {
		lanestep.Grant[int](m.p, m.limits, laneBook{m, w})
	}
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
