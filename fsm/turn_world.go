package fsm

import (
	"fmt"

	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// The turn world is plock's in-process turn registry for one lock, with
// TurnBounds.Tasks acquisitions of it (tasks t0, t1, ...) each driven by a turn
// policy, and the environment: another process that takes and releases the
// lock, each task's context ending, backoffs elapsing, attempts failing, and
// the caller releasing a lock it got.
//
// The world mirrors plock/turns.go and plock/plock.go; it never looks at a
// policy's state names, only at its outputs:
//
//   - Acquire checks ctx first: a task whose ctx ended before the call
//     returns the cause without any step (so the runtime never fires Abort
//     at a task that has not made its Request). Otherwise request creates
//     the lock's queue if the registry has none, and steps Request with
//     turnFree = no owner and nobody waiting, plus wait = Options.Wait.
//   - Every step (stepLocked) carries out the bookkeeping outputs at once,
//     in this order: takeTurn makes the task the owner; enqueue appends it
//     to the waiting list; leaveQueue removes every entry of it; passTurn,
//     unless unlock is output too, ends its turn (below). Then the queue is
//     forgotten when nobody owns or waits, so a later Request makes a new
//     one; a task keeps the queue it started with, even once forgotten.
//   - Passing the turn does nothing unless the task owns it. Otherwise the
//     owner becomes nobody, or the head of the waiting list leaves the list,
//     becomes the owner, and its Turn step runs right there (nested, with
//     its own bookkeeping); its outputs are kept as the task's handed
//     outputs and its one-shot turned channel is closed. Closing it twice
//     panics in Go.
//   - The task's goroutine acts on the outputs in drive's order:
//     returnLock, returnHeld, returnError, returnCause return (an
//     error-returning output with no error behind it, or returnCause while
//     ctx is live, returns nil, nil); attempt starts an attempt; backoff
//     waits; enqueue waits for the turn; anything else panics. Other
//     outputs (unlock, for one) the goroutine does not act on.
//   - An attempt ignores ctx. It returns Acquired when no process holds the
//     lock, Busy when one does (another process, or a task of this one),
//     and AttemptFailed at any time; its outcome is fired at once.
//   - A backoff fires Retry when its timer fires or Abort when ctx is done;
//     entered with ctx already done it fires Abort.
//   - Waiting for the turn wakes when the turn is handed over or ctx ends;
//     it then takes the handed outputs if the turn was handed over (even
//     with ctx done), else it steps Abort.
//   - Release (once per lock) steps Release; with unlock it releases the
//     lock the attempt took (a Lock whose attempt took nothing panics
//     there); with passTurn it later passes the turn on (finishRelease).
//   - Every rejected trigger panics (stepLocked): plock maps no rejection
//     to an error its caller sees, so a Rejected verdict for any trigger is
//     a violation. The policy's other answers are taken as they are.
//
// A world that panicked has no moves. Each move is one registry call, or
// one environment event; the lock's I/O is folded into the registry call
// that reports it, which no other task can observe in between.
//
// The environment: another process takes the lock while no task holds it,
// at most TurnBounds.OtherTakes times, and releases it at any time after;
// a task's ctx ends at any time before its call returns, if it is a ctx
// that can end (both kinds are explored, so that a waiter nobody serves is
// a world without moves, which Owes reports); a caller releases its Lock
// at any time.
//
// The properties, on the runtime's variables (never on state names):
// the runtime never panics; at most one task attempts or holds the lock;
// no task owns or uses the turn while one that arrived before it waits;
// the queue lists exactly the tasks that wait for the turn; the turn's
// owner is a task that uses it (or is about to wake with it); a task holds
// the lock exactly while its Acquire has returned a Lock not yet released;
// Acquire never returns nil, nil; an Abort leaves the aborting task
// nowhere and the others in order (a move property); a task without wait
// that finds the turn taken returns a held error in that same move (a
// move property).

// TurnMaxTasks is the most tasks a turn world can hold.
const TurnMaxTasks = 5

// turnMaxOtherTakes bounds TurnBounds.OtherTakes.
const turnMaxOtherTakes = 8

// turnQueueCap is a queue's capacity: room for each task once, and for the
// duplicates a faulty policy makes before an invariant stops the search.
const turnQueueCap = TurnMaxTasks + 3

// turnMaxPassDepth bounds nested turn passing: deeper means the runtime
// would recurse until its stack overflows.
const turnMaxPassDepth = 2*TurnMaxTasks + 2

// TurnBounds bound the turn world.
type TurnBounds struct {
	// Tasks is the number of acquisitions of the lock in the process,
	// 1..TurnMaxTasks. Every mix of Options.Wait and of contexts that can
	// end or not is explored.
	Tasks int
	// OtherTakes is how many times another process may take the lock,
	// 0..8; it releases it at any time after.
	OtherTakes int
	// Symmetric identifies worlds that differ only in the tasks' numbering.
	Symmetric bool
}

// DefaultTurnBounds returns the bounds the tests check by default.
func DefaultTurnBounds() TurnBounds {
	return TurnBounds{Tasks: 4, OtherTakes: 2, Symmetric: true}
}

// TurnWorld is one state of the turn world: the tasks, the queues they
// started with, the registry's entry for the lock, and the other process.
type TurnWorld struct {
	tasks  [TurnMaxTasks]turnTask
	queues [TurnMaxTasks]turnQueue // numbered by first reference: tasks in order, then the registry
	n      uint8                   // tasks in use
	reg    turnRef                 // the queue the registry maps the lock to
	other  bool                    // another process holds the lock
	takes  uint8                   // takes left to the other process
	panic  turnPanic               // the runtime panicked; the world has no moves
}

// turnRef names a queue (1 + its index) or a task; 0 is none, so that zero
// values mean nothing.
type turnRef uint8

// turnTask is one Acquire call: its policy state, what its goroutine does,
// and the runtime variables the outputs maintain.
type turnTask struct {
	state   policy.StateID
	phase   turnPhase
	queue   turnRef // the queue of the lock when the task started (t.q)
	arrival uint8   // ghost: rank of its Request among live tasks, 1 first; 0 for none
	flags   turnFlags
	handed  uint16 // outputs of the Turn step the passer ran (t.handed)
}

// turnQueue is plock's turnQueue of the lock: the owner and the waiting list.
type turnQueue struct {
	owner   turnRef // 1 + task index
	n       uint8
	waiting [turnQueueCap]uint8 // task indices, in arrival order
}

// turnPhase is where a task's goroutine is.
type turnPhase uint8

const (
	turnNotStarted  turnPhase = iota // Acquire not called yet
	turnWaitTurn                     // in waitTurn
	turnAttempting                   // in attempt's I/O
	turnBackoff                      // in backoff, ctx live when it began
	turnBackoffDone                  // in backoff, begun with ctx done
	turnHolding                      // Acquire returned a Lock, not released
	turnReleasing                    // Release stepped, finishRelease to come
	turnReleased                     // Release returned
	turnGotHeld                      // Acquire returned a *HeldError
	turnGotError                     // Acquire returned the attempt's error
	turnGotCause                     // Acquire returned ctx's cause
	turnGotNil                       // Acquire returned nil, nil
)

// turnPhaseNames complete "the task ...".
var turnPhaseNames = [...]string{
	"has not called Acquire", "waits for the turn", "attempts", "backs off", "backs off (ctx done)",
	"holds a Lock", "is releasing", "has released", "returned a held error", "returned an error",
	"returned the cause", "returned nil, nil",
}

// done reports whether the call is over for good: nothing steps the task
// unless a queue still lists it.
func (p turnPhase) done() bool { return p >= turnReleased }

// served reports whether the task's goroutine uses its turn.
func (p turnPhase) served() bool { return p >= turnAttempting && p <= turnReleasing }

// turnFlags holds a task's booleans. It is 16 bits wide so that turnTask
// has no padding and worlds hash as plain memory.
type turnFlags uint16

const (
	turnWait        turnFlags = 1 << iota // Options.Wait
	turnCancellable                       // its ctx can end
	turnCtxDone                           // its ctx has ended
	turnTurned                            // its turned channel is closed
	turnHadError                          // an attempt failed (a.err is set)
	turnHeldLock                          // an attempt took the lock and no Release unlocked it
)

// turnPanic records why the runtime panicked.
type turnPanic struct {
	kind    turnPanicKind
	task    uint8
	trigger policy.TriggerID
	state   policy.StateID
}

type turnPanicKind uint8

const (
	turnNoPanic       turnPanicKind = iota
	turnPanicRejected               // stepLocked: the policy rejected a trigger
	turnPanicNoWork                 // drive: no output it acts on
	turnPanicTwice                  // passTurnLocked: turned closed twice
	turnPanicNilHeld                // Release: unlock of a Lock holding nothing
	turnPanicDeep                   // passTurnLocked: nested without end
	turnPanicCap                    // the model's queue capacity (not the runtime's)
)

// turnMove is a move of one task, in the order Next yields them.
type turnMove uint8

const (
	turnMoveAcquire turnMove = iota
	turnMoveCtxEnd
	turnMoveClaimTurn
	turnMoveClaimAbort
	turnMoveAcquired
	turnMoveBusy
	turnMoveFailed
	turnMoveRetry
	turnMoveBackoffAbort
	turnMoveRelease
	turnMoveFinish
	turnMoveCount
)

var turnMoveNames = [turnMoveCount]string{
	"Acquire", "ctx ends", "wakes: turn handed over", "wakes: ctx done, Abort",
	"attempt: Acquired", "attempt: Busy", "attempt: AttemptFailed",
	"backoff elapses: Retry", "backoff: ctx done, Abort", "Release", "Release: pass the turn",
}

const (
	turnLabelOtherTakes    = "other process takes the lock"
	turnLabelOtherReleases = "other process releases the lock"
)

// The turn family's vocabulary as policy IDs.
var (
	turnTrRequest       = policy.TriggerID(TurnRequest)
	turnTrTurn          = policy.TriggerID(TurnTurn)
	turnTrAcquired      = policy.TriggerID(TurnAcquired)
	turnTrBusy          = policy.TriggerID(TurnBusy)
	turnTrAttemptFailed = policy.TriggerID(TurnAttemptFailed)
	turnTrRetry         = policy.TriggerID(TurnRetry)
	turnTrAbort         = policy.TriggerID(TurnAbort)
	turnTrRelease       = policy.TriggerID(TurnRelease)

	turnFactFree = policy.Facts(TurnFactTurnFree)
	turnFactWait = policy.Facts(TurnFactWait)

	turnOutLeave  = policy.Outputs(TurnOutputLeaveQueue)
	turnOutUnlock = policy.Outputs(TurnOutputUnlock)
	turnOutPass   = policy.Outputs(TurnOutputPassTurn)
	turnOutTake   = policy.Outputs(TurnOutputTakeTurn)
	turnOutEnq    = policy.Outputs(TurnOutputEnqueue)
	turnOutTry    = policy.Outputs(TurnOutputAttempt)
	turnOutBack   = policy.Outputs(TurnOutputBackoff)
	turnOutLock   = policy.Outputs(TurnOutputReturnLock)
	turnOutHeld   = policy.Outputs(TurnOutputReturnHeld)
	turnOutError  = policy.Outputs(TurnOutputReturnError)
	turnOutCause  = policy.Outputs(TurnOutputReturnCause)
)

// turnOutMask keeps the outputs of the family; the runtime acts on no others.
const turnOutMask = 1<<len(turnOutputNames) - 1

// turnModel is the model's fixed part: the policy and precomputed labels.
type turnModel struct {
	p      policy.Policy
	tab    *policy.Table
	n      int
	names  [TurnMaxTasks]string
	labels [TurnMaxTasks][turnMoveCount]string
}

// TurnModel returns the turn world of policy p within bounds b, with the
// turn family's invariants.
func TurnModel(p policy.Policy, b TurnBounds) (modelcheck.Model[TurnWorld], error) {
	if b.Tasks < 1 || b.Tasks > TurnMaxTasks {
		return modelcheck.Model[TurnWorld]{}, &ModelError{"turn", "Tasks", fmt.Sprintf("%d, want 1 to %d", b.Tasks, TurnMaxTasks)}
	}
	if b.OtherTakes < 0 || b.OtherTakes > turnMaxOtherTakes {
		return modelcheck.Model[TurnWorld]{}, &ModelError{"turn", "OtherTakes", fmt.Sprintf("%d, want 0 to %d", b.OtherTakes, turnMaxOtherTakes)}
	}
	if p.Family() != "turn" {
		return modelcheck.Model[TurnWorld]{}, &ModelError{"turn", "Policy", fmt.Sprintf("%s is of family %q, not turn", p.Name(), p.Family())}
	}
	m := &turnModel{p: p, tab: p.Table(), n: b.Tasks}
	for i := range m.n {
		m.names[i] = fmt.Sprintf("t%d", i)
		for mv := range turnMoveCount {
			m.labels[i][mv] = m.names[i] + " " + turnMoveNames[mv]
		}
	}
	model := modelcheck.Model[TurnWorld]{
		Name:       "turn " + p.Name(),
		Init:       m.initial(b),
		Next:       m.next,
		Invariants: m.invariants(),
		Moves:      m.moveInvariants(),
		Owes:       m.owes,
		Format:     m.format,
	}
	if b.Symmetric {
		model.Canonical = turnCanonical
	}
	return model, nil
}

// initial lists a world for each mix of wait and cancellable contexts,
// tasks numbered in order of their mix: any other numbering is the same
// world with the tasks renamed.
func (m *turnModel) initial(b TurnBounds) []TurnWorld {
	var worlds []TurnWorld
	var mix [TurnMaxTasks]turnFlags
	var gen func(i int, least turnFlags)
	gen = func(i int, least turnFlags) {
		if i == m.n {
			w := TurnWorld{n: uint8(m.n), takes: uint8(b.OtherTakes)}
			for k := range m.n {
				w.tasks[k] = turnTask{state: m.p.Initial(), flags: mix[k]}
			}
			worlds = append(worlds, w)
			return
		}
		for f := least; f <= turnWait|turnCancellable; f++ {
			mix[i] = f
			gen(i+1, f)
		}
	}
	gen(0, 0)
	return worlds
}

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

// emit applies move mv of task i to a copy of w and yields it.
func (m *turnModel) emit(w *TurnWorld, i uint8, mv turnMove, yield func(string, TurnWorld)) {
	nw := *w
	m.apply(&nw, i, mv)
	nw.normalize()
	yield(m.labels[i][mv], nw)
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
		m.passTurn(w, t.queue, i, 0)
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
	out := m.step(w, i, turnTrRequest, facts, 0)
	m.drive(w, i, out)
}

// fire is registry.fire followed by drive.
func (m *turnModel) fire(w *TurnWorld, i uint8, tr policy.TriggerID) {
	out := m.step(w, i, tr, 0, 0)
	m.drive(w, i, out)
}

// step is registry.stepLocked.
func (m *turnModel) step(w *TurnWorld, i uint8, tr policy.TriggerID, facts policy.Facts, depth int) policy.Outputs {
	t := &w.tasks[i]
	if t.flags&turnWait != 0 {
		facts |= turnFactWait
	}
	res := m.p.Step(t.state, tr, facts)
	if res.Verdict == policy.Rejected {
		w.setPanic(turnPanicRejected, i, tr, t.state)
		return 0
	}
	t.state = res.Next
	out, qr := res.Outputs, t.queue
	q := w.queue(qr)
	if out.Has(turnOutTake) {
		q.owner = turnRef(i + 1)
	}
	if out.Has(turnOutEnq) {
		if int(q.n) == len(q.waiting) {
			w.setPanic(turnPanicCap, i, tr, t.state)
			return 0
		}
		q.waiting[q.n] = i
		q.n++
	}
	if out.Has(turnOutLeave) {
		q.remove(i)
	}
	if out.Has(turnOutPass) && !out.Has(turnOutUnlock) {
		m.passTurn(w, qr, i, depth)
	}
	w.forgetIfIdle(qr)
	return out
}

// passTurn is registry.passTurnLocked.
func (m *turnModel) passTurn(w *TurnWorld, qr turnRef, from uint8, depth int) {
	q := w.queue(qr)
	if q.owner != turnRef(from+1) {
		return
	}
	q.owner = 0
	if q.n == 0 {
		return
	}
	next := q.waiting[0]
	copy(q.waiting[:q.n-1], q.waiting[1:q.n])
	q.n--
	q.waiting[q.n] = 0
	q.owner = turnRef(next + 1)
	if depth >= turnMaxPassDepth {
		w.setPanic(turnPanicDeep, next, turnTrTurn, w.tasks[next].state)
		return
	}
	out := m.step(w, next, turnTrTurn, 0, depth+1)
	if w.panic.kind != turnNoPanic {
		return
	}
	t := &w.tasks[next]
	t.handed = uint16(out & turnOutMask)
	if t.flags&turnTurned != 0 {
		w.setPanic(turnPanicTwice, next, turnTrTurn, t.state)
		return
	}
	t.flags |= turnTurned
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
	out := m.step(w, i, turnTrRelease, 0, 0)
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

func (w *TurnWorld) setPanic(k turnPanicKind, task uint8, tr policy.TriggerID, s policy.StateID) {
	w.panic = turnPanic{kind: k, task: task, trigger: tr, state: s}
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

func (m *turnModel) invariants() []modelcheck.Invariant[TurnWorld] {
	return []modelcheck.Invariant[TurnWorld]{
		{Name: TurnInvNoPanic, Check: m.checkNoPanic},
		{Name: TurnInvOneAtLock, Check: m.checkOneAtLock},
		{Name: TurnInvArrival, Check: m.checkArrival},
		{Name: TurnInvQueue, Check: m.checkQueue},
		{Name: TurnInvTurnPassed, Check: m.checkTurnPassed},
		{Name: TurnInvLockHeld, Check: m.checkLockHeld},
		{Name: TurnInvReturns, Check: m.checkReturns},
	}
}

func (m *turnModel) moveInvariants() []modelcheck.MoveInvariant[TurnWorld] {
	return []modelcheck.MoveInvariant[TurnWorld]{
		{Name: TurnMoveAbortOrder, Check: m.checkAbortOrder},
		{Name: TurnMoveHeldAtOnce, Check: m.checkHeldAtOnce},
	}
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

func (m *turnModel) stateName(s policy.StateID) string {
	if int(s) < len(m.tab.States) {
		return m.tab.States[s].Name
	}
	return fmt.Sprintf("State(%d)", s)
}

func (m *turnModel) triggerName(t policy.TriggerID) string {
	if int(t) < len(m.tab.Triggers) {
		return m.tab.Triggers[t].Name
	}
	return fmt.Sprintf("Trigger(%d)", t)
}

func (m *turnModel) describePanic(w TurnWorld) string {
	p := w.panic
	name, state := m.names[p.task], m.stateName(p.state)
	switch p.kind {
	case turnPanicRejected:
		return fmt.Sprintf("plock panics: the policy rejects %s in state %s (%s)", m.triggerName(p.trigger), state, name)
	case turnPanicNoWork:
		return fmt.Sprintf("plock panics: %s's call has nothing to do in state %s", name, state)
	case turnPanicTwice:
		return fmt.Sprintf("plock panics: the turn is handed to %s a second time (close of closed channel)", name)
	case turnPanicNilHeld:
		return fmt.Sprintf("plock panics: %s releases a Lock whose attempt took nothing", name)
	case turnPanicDeep:
		return fmt.Sprintf("plock recurses without end handing the turn over (at %s, state %s)", name, state)
	case turnPanicCap:
		return fmt.Sprintf("the model's queue capacity is exceeded: %s queued over and over", name)
	}
	return ""
}

// format renders w for traces: the other process, the registry, the
// queues, then each task.
func (m *turnModel) format(w TurnWorld) string {
	var b []byte
	if w.other {
		b = append(b, "other process holds the lock"...)
	} else {
		b = append(b, "lock free of other processes"...)
	}
	b = fmt.Appendf(b, " (%d takes left); registry: %s", w.takes, turnQueueName(w.reg))
	refs, n := w.liveQueues()
	for _, r := range refs[:n] {
		q := w.queue(r)
		b = fmt.Appendf(b, "; %s owner %s waiting [", turnQueueName(r), m.taskName(q.owner))
		for k, x := range q.waiting[:q.n] {
			if k > 0 {
				b = append(b, ' ')
			}
			b = append(b, m.names[x]...)
		}
		b = append(b, ']')
	}
	for i := range w.n {
		b = append(b, "\n       "...)
		b = m.appendTask(b, &w.tasks[i], i)
	}
	if w.panic.kind != turnNoPanic {
		b = append(b, "\n       "...)
		b = append(b, m.describePanic(w)...)
	}
	return string(b)
}

func (m *turnModel) appendTask(b []byte, t *turnTask, i uint8) []byte {
	b = fmt.Appendf(b, "%s %s (state %s)", m.names[i], turnPhaseNames[t.phase], m.stateName(t.state))
	flags := [...]struct {
		f    turnFlags
		name string
	}{
		{turnWait, "wait"}, {turnCancellable, "cancellable"}, {turnCtxDone, "ctx done"},
		{turnTurned, "turned"}, {turnHadError, "attempt failed"}, {turnHeldLock, "HOLDS THE LOCK"},
	}
	for _, f := range flags {
		if t.flags&f.f != 0 {
			b = append(b, ", "...)
			b = append(b, f.name...)
		}
	}
	if t.queue != 0 {
		b = fmt.Appendf(b, ", in %s", turnQueueName(t.queue))
	}
	if t.arrival != 0 {
		b = fmt.Appendf(b, ", arrival %d", t.arrival)
	}
	if t.handed != 0 {
		b = fmt.Appendf(b, ", handed %s", policy.FormatBits(uint64(t.handed), m.outputNames(), "Outputs"))
	}
	return b
}

func (m *turnModel) outputNames() []string {
	names := make([]string, len(m.tab.Outputs))
	for i, o := range m.tab.Outputs {
		names[i] = o.Name
	}
	return names
}

func (m *turnModel) taskName(r turnRef) string {
	if r == 0 {
		return "none"
	}
	return m.names[r-1]
}

func turnQueueName(r turnRef) string {
	if r == 0 {
		return "no queue"
	}
	return fmt.Sprintf("q%d", r)
}
