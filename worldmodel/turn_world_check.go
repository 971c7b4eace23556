package worldmodel

import (
	"fmt"
	"slices"

	"github.com/rivus/collab/modelcheck"
)

// invariants are the turn world's properties but those the policy waives.
func (m *turnModel) invariants() []modelcheck.Invariant[TurnWorld] {
	return slices.DeleteFunc([]modelcheck.Invariant[TurnWorld]{
		{Name: TurnInvNoPanic, Check: m.checkNoPanic},
		{Name: TurnInvOneAtLock, Check: m.checkOneAtLock},
		{Name: TurnInvArrival, Check: m.checkArrival},
		{Name: TurnInvQueue, Check: m.checkQueue},
		{Name: TurnInvTurnPassed, Check: m.checkTurnPassed},
		{Name: TurnInvLockHeld, Check: m.checkLockHeld},
		{Name: TurnInvReturns, Check: m.checkReturns},
	}, func(inv modelcheck.Invariant[TurnWorld]) bool { return waives(m.p, turnFamily(), inv.Name) })
}

func (m *turnModel) moveInvariants() []modelcheck.MoveInvariant[TurnWorld] {
	return slices.DeleteFunc([]modelcheck.MoveInvariant[TurnWorld]{
		{Name: TurnMoveAbortOrder, Check: m.checkAbortOrder},
		{Name: TurnMoveHeldAtOnce, Check: m.checkHeldAtOnce},
	}, func(inv modelcheck.MoveInvariant[TurnWorld]) bool { return waives(m.p, turnFamily(), inv.Name) })
}

// checkNoPanic: the runtime never panics, which covers every rejected
// trigger, since stepLocked panics on each.
func (m *turnModel) checkNoPanic(w TurnWorld) error {
	if w.panic.kind == turnNoPanic {
		return nil
	}
	return fmt.Errorf("%s", m.describePanic(w))
}

// checkOneAtLock: at most one task of the process attempts or holds the
// lock (an attempt and a hold of one task count twice).
func (m *turnModel) checkOneAtLock(w TurnWorld) error {
	var at []string
	for i := range w.n {
		t := &w.tasks[i]
		if t.phase == turnAttempting {
			at = append(at, m.names[i]+" attempts")
		}
		if t.flags&turnHeldLock != 0 {
			at = append(at, m.names[i]+" holds")
		}
	}
	if len(at) > 1 {
		return fmt.Errorf("more than one task at the lock: %v", at)
	}
	return nil
}

// checkArrival: no task owns or uses the turn while a task that made its
// Request before it still waits for the turn.
func (m *turnModel) checkArrival(w TurnWorld) error {
	for s := range w.n {
		ts := &w.tasks[s]
		how := "owns the turn"
		if !w.owns(s) {
			if !ts.phase.served() {
				continue
			}
			how = turnPhaseNames[ts.phase]
		}
		for b := range w.n {
			tb := &w.tasks[b]
			if tb.blocked() && tb.arrival != 0 && tb.arrival < ts.arrival {
				return fmt.Errorf("%s %s while %s, which arrived before it, still waits", m.names[s], how, m.names[b])
			}
		}
	}
	return nil
}

// checkQueue: a task is listed as waiting exactly once while its goroutine
// waits for a turn not yet handed over, and never otherwise.
func (m *turnModel) checkQueue(w TurnWorld) error {
	var count [TurnMaxTasks]int
	refs, n := w.liveQueues()
	for _, r := range refs[:n] {
		q := w.queue(r)
		for _, x := range q.waiting[:q.n] {
			count[x]++
		}
	}
	for i := range w.n {
		want := 0
		if w.tasks[i].blocked() {
			want = 1
		}
		if count[i] != want {
			return fmt.Errorf("%s, which %s, is listed %d times as waiting, want %d",
				m.names[i], turnPhaseNames[w.tasks[i].phase], count[i], want)
		}
	}
	return nil
}

// checkTurnPassed: the turn's owner is a task that attempts, backs off,
// holds or releases the lock, or has been handed the turn and not yet
// woken; a call that returned otherwise has passed it on.
func (m *turnModel) checkTurnPassed(w TurnWorld) error {
	refs, n := w.liveQueues()
	for _, r := range refs[:n] {
		o := w.queue(r).owner
		if o == 0 {
			continue
		}
		t := &w.tasks[o-1]
		if t.phase.served() || t.phase == turnWaitTurn && t.flags&turnTurned != 0 {
			continue
		}
		return fmt.Errorf("the turn stays with %s, which %s (state %s)", m.names[o-1], turnPhaseNames[t.phase], m.stateName(t.state))
	}
	return nil
}

// checkLockHeld: a task holds the lock exactly while Acquire has returned
// it a Lock that was not released.
func (m *turnModel) checkLockHeld(w TurnWorld) error {
	for i := range w.n {
		t := &w.tasks[i]
		held := t.flags&turnHeldLock != 0
		switch {
		case held && t.phase != turnHolding:
			return fmt.Errorf("the lock is held by %s, which %s (state %s)", m.names[i], turnPhaseNames[t.phase], m.stateName(t.state))
		case !held && t.phase == turnHolding:
			return fmt.Errorf("%s's Acquire returned a Lock, but no attempt of it took the lock (state %s)", m.names[i], m.stateName(t.state))
		}
	}
	return nil
}

// checkReturns: Acquire never returns nil, nil (returnError with no failed
// attempt, or returnCause with a live ctx).
func (m *turnModel) checkReturns(w TurnWorld) error {
	for i := range w.n {
		if t := &w.tasks[i]; t.phase == turnGotNil {
			return fmt.Errorf("%s's Acquire returned nil, nil (state %s)", m.names[i], m.stateName(t.state))
		}
	}
	return nil
}

// checkAbortOrder: the task whose Abort a move fires leaves no trace (not
// listed, not the owner), and the others keep their order: nobody joins or
// leaves the waiting lists, except the head, handed the turn by the
// aborting owner.
func (m *turnModel) checkAbortOrder(from TurnWorld, label string, to TurnWorld) error {
	x, ok := m.taskOf(label, turnMoveClaimAbort, turnMoveBackoffAbort)
	if !ok || to.panic.kind != turnNoPanic {
		return nil
	}
	if to.ownsAny(x) || to.listedAnywhere(x) {
		return fmt.Errorf("%s aborted but still owns the turn or waits in the queue", m.names[x])
	}
	head, hasHead := from.headWithout(x)
	for y := range from.n {
		if y == x {
			continue
		}
		qf, pf := from.position(y)
		qt, pt := to.position(y)
		switch {
		case pt >= 0 && pf < 0:
			return fmt.Errorf("%s joined the queue when %s aborted", m.names[y], m.names[x])
		case pt < 0 && pf >= 0 && !(hasHead && y == head && from.owns(x) && to.owns(y)):
			return fmt.Errorf("%s left the queue when %s aborted", m.names[y], m.names[x])
		case pt < 0 || pf < 0:
			continue
		}
		for z := range from.n {
			qz, pz := from.position(z)
			qzt, pzt := to.position(z)
			if z == x || z == y || pz < 0 || pzt < 0 || qz != qf {
				continue
			}
			if qzt != qt || (pz < pf) != (pzt < pt) {
				return fmt.Errorf("%s and %s changed their order when %s aborted", m.names[y], m.names[z], m.names[x])
			}
		}
	}
	return nil
}

// checkHeldAtOnce: a task without wait whose Request finds the turn taken
// (an owner, or waiters) returns a held error in that same move.
func (m *turnModel) checkHeldAtOnce(from TurnWorld, label string, to TurnWorld) error {
	i, ok := m.taskOf(label, turnMoveAcquire, turnMoveAcquire)
	if !ok || to.panic.kind != turnNoPanic || from.tasks[i].flags&turnWait != 0 || from.reg == 0 {
		return nil
	}
	if q := from.queue(from.reg); q.owner == 0 && q.n == 0 {
		return nil
	}
	if p := to.tasks[i].phase; p != turnGotHeld {
		return fmt.Errorf("%s, without wait, found the turn taken and %s instead of returning a held error at once",
			m.names[i], turnPhaseNames[p])
	}
	return nil
}

// taskOf returns the task whose move a or b label is.
func (m *turnModel) taskOf(label string, a, b turnMove) (uint8, bool) {
	for i := range m.n {
		if label == m.labels[i][a] || label == m.labels[i][b] {
			return uint8(i), true
		}
	}
	return 0, false
}

// ownsAny reports whether a live queue has task i as its owner.
func (w *TurnWorld) ownsAny(i uint8) bool {
	refs, n := w.liveQueues()
	for _, r := range refs[:n] {
		if w.queue(r).owner == turnRef(i+1) {
			return true
		}
	}
	return false
}

// listedAnywhere reports whether a live queue lists task i as waiting.
func (w *TurnWorld) listedAnywhere(i uint8) bool {
	refs, n := w.liveQueues()
	for _, r := range refs[:n] {
		if w.queue(r).lists(i) {
			return true
		}
	}
	return false
}

// position returns the queue listing task i and its place there, or -1.
func (w *TurnWorld) position(i uint8) (turnRef, int) {
	r := w.tasks[i].queue
	if r == 0 {
		return 0, -1
	}
	q := w.queue(r)
	for k, x := range q.waiting[:q.n] {
		if x == i {
			return r, k
		}
	}
	return r, -1
}

// headWithout returns the first waiter of task x's queue other than x.
func (w *TurnWorld) headWithout(x uint8) (uint8, bool) {
	r := w.tasks[x].queue
	if r == 0 {
		return 0, false
	}
	q := w.queue(r)
	for _, y := range q.waiting[:q.n] {
		if y != x {
			return y, true
		}
	}
	return 0, false
}

// owes: a world without moves owes every call that has not returned; with
// the environment's moves always possible, only a task that waits, with a
// context that cannot end, for a turn nobody will hand over gets here.
func (m *turnModel) owes(w TurnWorld) string {
	for i := range w.n {
		if t := &w.tasks[i]; !t.phase.done() {
			return fmt.Sprintf("%s %s, and its Acquire never returns", m.names[i], turnPhaseNames[t.phase])
		}
	}
	return ""
}
