package worldmodel

import (
	"github.com/rivus/collab/internal/turnstep"
	"github.com/rivus/collab/policy"
)

// next yields every move of w: each task's, then the other process's.
func (m *turnModel) next(w TurnWorld, yield func(string, TurnWorld)) {
	if w.panic.kind != turnNoPanic {
		return
	}
	for i := range m.n {
		m.taskMoves(&w, uint8(i), yield)
	}
	if !w.other && w.takes > 0 && !w.taskHoldsLock() {
		nw := w
		nw.other, nw.takes = true, nw.takes-1
		yield(turnLabelOtherTakes, nw)
	}
	if w.other {
		nw := w
		nw.other = false
		yield(turnLabelOtherReleases, nw)
	}
}

// taskMoves yields the moves of task i that its phase allows.
func (m *turnModel) taskMoves(w *TurnWorld, i uint8, yield func(string, TurnWorld)) {
	t := &w.tasks[i]
	canEnd := t.flags&(turnCancellable|turnCtxDone) == turnCancellable
	switch t.phase {
	case turnNotStarted:
		m.emit(w, i, turnMoveAcquire, yield)
	case turnWaitTurn:
		if t.flags&turnTurned != 0 {
			m.emit(w, i, turnMoveClaimTurn, yield)
		} else if t.flags&turnCtxDone != 0 {
			m.emit(w, i, turnMoveClaimAbort, yield)
		}
	case turnAttempting:
		if w.other || w.taskHoldsLock() {
			m.emit(w, i, turnMoveBusy, yield)
		} else {
			m.emit(w, i, turnMoveAcquired, yield)
		}
		m.emit(w, i, turnMoveFailed, yield)
	case turnBackoff:
		m.emit(w, i, turnMoveRetry, yield)
		if t.flags&turnCtxDone != 0 {
			m.emit(w, i, turnMoveBackoffAbort, yield)
		}
	case turnBackoffDone:
		m.emit(w, i, turnMoveBackoffAbort, yield)
	case turnHolding:
		m.emit(w, i, turnMoveRelease, yield)
	case turnReleasing:
		m.emit(w, i, turnMoveFinish, yield)
	}
	if canEnd && t.phase <= turnBackoff {
		m.emit(w, i, turnMoveCtxEnd, yield)
	}
}

// emit applies move mv of task i to a copy of w and yields it. The copy
// is the model's scratch world: the runtime's step (internal/turnstep)
// takes the world through an interface, which would move a world on the
// stack to the heap on every move.
func (m *turnModel) emit(w *TurnWorld, i uint8, mv turnMove, yield func(string, TurnWorld)) {
	nw := m.scratch
	*nw, m.pops = *w, 0
	m.apply(nw, i, mv)
	nw.normalize()
	yield(m.labels[i][mv], *nw)
}

// apply carries out move mv of task i as the runtime does.
func (m *turnModel) apply(w *TurnWorld, i uint8, mv turnMove) {
	t := &w.tasks[i]
	switch mv {
	case turnMoveAcquire:
		m.request(w, i)
	case turnMoveCtxEnd:
		if t.phase == turnNotStarted {
			t.phase = turnGotCause // Acquire's ctx check, before any step
		}
		t.flags |= turnCtxDone
	case turnMoveClaimTurn:
		m.drive(w, i, policy.Outputs(t.handed))
	case turnMoveClaimAbort, turnMoveBackoffAbort:
		m.fire(w, i, turnTrAbort)
	case turnMoveAcquired:
		t.flags |= turnHeldLock
		m.fire(w, i, turnTrAcquired)
	case turnMoveBusy:
		m.fire(w, i, turnTrBusy)
	case turnMoveFailed:
		t.flags |= turnHadError
		m.fire(w, i, turnTrAttemptFailed)
	case turnMoveRetry:
		m.fire(w, i, turnTrRetry)
	case turnMoveRelease:
		m.release(w, i)
	case turnMoveFinish:
		turnstep.PassTurn[uint8](m.p, turnBook{m, w}, i)
		w.forgetIfIdle(t.queue)
		t.phase = turnReleased
	}
}

// request is registry.request followed by drive.
func (m *turnModel) request(w *TurnWorld, i uint8) {
	if w.reg == 0 {
		w.reg = w.newQueue()
	}
	t := &w.tasks[i]
	t.queue = w.reg
	t.arrival = w.lastArrival() + 1
	var facts policy.Facts
	if q := w.queue(w.reg); q.owner == 0 && q.n == 0 {
		facts |= turnFactFree
	}
	out := m.step(w, i, turnTrRequest, facts)
	m.drive(w, i, out)
}

// fire is registry.fire followed by drive.
func (m *turnModel) fire(w *TurnWorld, i uint8, tr policy.TriggerID) {
	out := m.step(w, i, tr, 0)
	m.drive(w, i, out)
}

// step is registry.stepLocked: the runtime's own step code.
func (m *turnModel) step(w *TurnWorld, i uint8, tr policy.TriggerID, facts policy.Facts) policy.Outputs {
	out, _ := turnstep.Step[uint8](m.p, turnBook{m, w}, i, tr, facts)
	return out
}

// drive is acquisition.drive up to the next wait: it returns from Acquire
// or starts what fires the next trigger.
func (m *turnModel) drive(w *TurnWorld, i uint8, out policy.Outputs) {
	if w.panic.kind != turnNoPanic {
		return
	}
	t := &w.tasks[i]
	switch {
	case out.Has(turnOutLock):
		t.phase = turnHolding
	case out.Has(turnOutHeld):
		t.phase = turnGotHeld
	case out.Has(turnOutError):
		t.phase = turnGotNil
		if t.flags&turnHadError != 0 {
			t.phase = turnGotError
		}
	case out.Has(turnOutCause):
		t.phase = turnGotNil
		if t.flags&turnCtxDone != 0 {
			t.phase = turnGotCause
		}
	case out.Has(turnOutTry):
		t.phase = turnAttempting
	case out.Has(turnOutBack):
		t.phase = turnBackoff
		if t.flags&turnCtxDone != 0 {
			t.phase = turnBackoffDone
		}
	case out.Has(turnOutEnq):
		t.phase = turnWaitTurn
	default:
		w.setPanic(turnPanicNoWork, i, 0, t.state)
	}
}

// release is Lock.Release, up to finishRelease.
func (m *turnModel) release(w *TurnWorld, i uint8) {
	out := m.step(w, i, turnTrRelease, 0)
	if w.panic.kind != turnNoPanic {
		return
	}
	t := &w.tasks[i]
	if out.Has(turnOutUnlock) {
		if t.flags&turnHeldLock == 0 {
			w.setPanic(turnPanicNilHeld, i, turnTrRelease, t.state)
			return
		}
		t.flags &^= turnHeldLock
	}
	t.phase = turnReleased
	if out.Has(turnOutPass) {
		t.phase = turnReleasing
	}
}

// setPanic records why the runtime panicked; the first panic of a move
// stands, as the runtime would not have gone on.
func (w *TurnWorld) setPanic(k turnPanicKind, task uint8, tr policy.TriggerID, s policy.StateID) {
	if w.panic.kind == turnNoPanic {
		w.panic = turnPanic{kind: k, task: task, trigger: tr, state: s}
	}
}

// queue returns the queue r names.
func (w *TurnWorld) queue(r turnRef) *turnQueue { return &w.queues[r-1] }

// newQueue returns a fresh queue that no task uses.
func (w *TurnWorld) newQueue() turnRef {
	var used [TurnMaxTasks + 1]bool
	for i := range w.n {
		used[w.tasks[i].queue] = true
	}
	r := turnRef(1)
	for used[r] {
		r++
	}
	*w.queue(r) = turnQueue{}
	return r
}

// forgetIfIdle is registry.forgetIfIdleLocked.
func (w *TurnWorld) forgetIfIdle(r turnRef) {
	if q := w.queue(r); q.owner == 0 && q.n == 0 && w.reg == r {
		w.reg = 0
	}
}

// remove deletes every entry of task i, keeping the others' order.
func (q *turnQueue) remove(i uint8) {
	k := uint8(0)
	for j := range q.n {
		if q.waiting[j] != i {
			q.waiting[k] = q.waiting[j]
			k++
		}
	}
	for j := k; j < q.n; j++ {
		q.waiting[j] = 0
	}
	q.n = k
}

// lists reports whether q lists task i as waiting.
func (q *turnQueue) lists(i uint8) bool {
	for _, x := range q.waiting[:q.n] {
		if x == i {
			return true
		}
	}
	return false
}

// taskHoldsLock reports whether a task of the process holds the lock.
func (w *TurnWorld) taskHoldsLock() bool {
	for i := range w.n {
		if w.tasks[i].flags&turnHeldLock != 0 {
			return true
		}
	}
	return false
}

func (w *TurnWorld) lastArrival() uint8 {
	var a uint8
	for i := range w.n {
		a = max(a, w.tasks[i].arrival)
	}
	return a
}

// owns reports whether task i owns the turn of its queue.
func (w *TurnWorld) owns(i uint8) bool {
	r := w.tasks[i].queue
	return r != 0 && w.queue(r).owner == turnRef(i+1)
}

// blocked reports whether task i's goroutine waits for a turn not handed yet.
func (t *turnTask) blocked() bool { return t.phase == turnWaitTurn && t.flags&turnTurned == 0 }

// normalize gives w its one representation: a finished task that no queue
// lists forgets what no step will read again, arrival ranks are dense, and
// queues are numbered by first reference.
func (w *TurnWorld) normalize() {
	listed := w.listed()
	for i := range w.n {
		t := &w.tasks[i]
		if t.phase.done() && !listed[i] {
			*t = turnTask{state: t.state, phase: t.phase, flags: t.flags & turnHeldLock}
		}
	}
	var ranks [TurnMaxTasks]uint8
	for i := range w.n {
		if a := w.tasks[i].arrival; a != 0 {
			ranks[i] = 1
			for j := range w.n {
				if b := w.tasks[j].arrival; b != 0 && b < a {
					ranks[i]++
				}
			}
		}
	}
	for i := range w.n {
		w.tasks[i].arrival = ranks[i]
	}
	w.renumberQueues()
}

// listed tells which tasks a live queue names as owner or waiter.
func (w *TurnWorld) listed() [TurnMaxTasks]bool {
	var listed [TurnMaxTasks]bool
	refs, n := w.liveQueues()
	for _, r := range refs[:n] {
		q := w.queue(r)
		if q.owner != 0 {
			listed[q.owner-1] = true
		}
		for _, x := range q.waiting[:q.n] {
			listed[x] = true
		}
	}
	return listed
}

// liveQueues returns the queues a task or the registry refers to, each
// once, in order of first reference (tasks first, so that a task's queue
// keeps its number while the registry makes a new one).
func (w *TurnWorld) liveQueues() (refs [TurnMaxTasks]turnRef, n int) {
	var seen [TurnMaxTasks + 1]bool
	seen[0] = true
	add := func(r turnRef) {
		if !seen[r] {
			seen[r] = true
			refs[n] = r
			n++
		}
	}
	for i := range w.n {
		add(w.tasks[i].queue)
	}
	add(w.reg)
	return refs, n
}

// renumberQueues numbers the live queues by first reference and clears
// the others.
func (w *TurnWorld) renumberQueues() {
	var to [TurnMaxTasks + 1]turnRef
	var qs [TurnMaxTasks]turnQueue
	refs, n := w.liveQueues()
	for k, r := range refs[:n] {
		to[r] = turnRef(k + 1)
		qs[k] = *w.queue(r)
	}
	w.queues = qs
	w.reg = to[w.reg]
	for i := range w.n {
		w.tasks[i].queue = to[w.tasks[i].queue]
	}
}

// turnCanonical renumbers the tasks by arrival, then by the rest of their
// variables. Tasks that arrived have distinct ranks, and two tasks that
// have not arrived, or are done and unlisted, are equal when their keys
// are, so each class of worlds gets one representative.
func turnCanonical(w TurnWorld) TurnWorld {
	var perm [TurnMaxTasks]uint8
	var keys [TurnMaxTasks]uint64
	for i := range w.n {
		t := &w.tasks[i]
		perm[i] = i
		rank := uint64(t.arrival)
		if rank == 0 {
			rank = 0xff // arrived tasks first, in arrival order, so traces rename little
		}
		keys[i] = rank<<48 | uint64(t.phase)<<40 | uint64(t.state)<<32 | uint64(t.flags)<<16 | uint64(t.handed)
	}
	for i := 1; i < int(w.n); i++ {
		for j := i; j > 0 && keys[perm[j]] < keys[perm[j-1]]; j-- {
			perm[j], perm[j-1] = perm[j-1], perm[j]
		}
	}
	var inv [TurnMaxTasks]uint8
	c := w
	for k := range w.n {
		c.tasks[k] = w.tasks[perm[k]]
		inv[perm[k]] = k
	}
	for r := range c.queues {
		q := &c.queues[r]
		if q.owner != 0 {
			q.owner = turnRef(inv[q.owner-1] + 1)
		}
		for j := range q.n {
			q.waiting[j] = inv[q.waiting[j]]
		}
	}
	if c.panic.kind != turnNoPanic {
		c.panic.task = inv[c.panic.task]
	}
	c.renumberQueues()
	return c
}

// The names of the turn world's properties.
const (
	TurnInvNoPanic     = "runtime never panics"
	TurnInvOneAtLock   = "one task at the lock"
	TurnInvArrival     = "arrival order"
	TurnInvQueue       = "queue lists its waiters"
	TurnInvTurnPassed  = "turn passed on"
	TurnInvLockHeld    = "lock held by its call"
	TurnInvReturns     = "call returns a lock or an error"
	TurnMoveAbortOrder = "abort leaves the queue in order"
	TurnMoveHeldAtOnce = "no wait: held at once"
)
