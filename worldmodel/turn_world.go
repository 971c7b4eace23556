package worldmodel

import (
	"fmt"
	"sync"

	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// The turn world is plock's in-process turn registry for one lock, with
// TurnBounds.Tasks acquisitions of it (tasks t0, t1, ...) each driven by a turn
// policy, and the environment: another process that takes and releases the
// lock, each task's context ending, backoffs elapsing, attempts failing, and
// the caller releasing a lock it got.
//
// Its steps are plock's own: the world runs internal/turnstep, the code
// plock's turn registry runs, over its compact queues, and mirrors the rest
// of plock/turns.go and plock/plock.go; it never looks at a policy's state
// names, only at its outputs:
//
//   - Acquire checks ctx first: a task whose ctx ended before the call
//     returns the cause without any step (so the runtime never fires Abort
//     at a task that has not made its Request). Otherwise request creates
//     the lock's queue if the registry has none, and steps Request with
//     turnFree = no owner and nobody waiting, plus wait = Options.Wait.
//   - Every step (stepLocked) carries out the bookkeeping outputs at once,
//     in the family's order: leaveQueue removes every entry of the task;
//     passTurn, unless unlock is output too, ends its turn (below);
//     takeTurn makes the task the owner; enqueue appends it to the waiting
//     list with a fresh turn signal. Then the queue is
//     forgotten when nobody owns or waits, so a later Request makes a new
//     one; a task keeps the queue it started with, even once forgotten.
//   - Passing the turn does nothing unless the task owns it. Otherwise the
//     owner becomes nobody, or the head of the waiting list leaves the list,
//     becomes the owner, and its Turn step runs right there (nested, with
//     its own bookkeeping); its outputs are kept as the task's handed
//     outputs and its turned channel is closed. Closing it twice panics in
//     Go; each wait for the turn gets a new channel.
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
const (
	turnTrRequest       = policy.TurnRequest
	turnTrAcquired      = policy.TurnAcquired
	turnTrBusy          = policy.TurnBusy
	turnTrAttemptFailed = policy.TurnAttemptFailed
	turnTrRetry         = policy.TurnRetry
	turnTrAbort         = policy.TurnAbort
	turnTrRelease       = policy.TurnRelease

	turnFactFree = policy.TurnFactTurnFree

	turnOutUnlock = policy.TurnOutputUnlock
	turnOutPass   = policy.TurnOutputPassTurn
	turnOutEnq    = policy.TurnOutputEnqueue
	turnOutTry    = policy.TurnOutputAttempt
	turnOutBack   = policy.TurnOutputBackoff
	turnOutLock   = policy.TurnOutputReturnLock
	turnOutHeld   = policy.TurnOutputReturnHeld
	turnOutError  = policy.TurnOutputReturnError
	turnOutCause  = policy.TurnOutputReturnCause
)

// turnOutMask keeps the outputs of the family; the runtime acts on no others.
var turnOutMask = sync.OnceValue(func() policy.Outputs { return policy.Outputs(1)<<len(turnFamily().Outputs) - 1 })

// turnModel is the model's fixed part: the policy and precomputed labels.
type turnModel struct {
	p      policy.Policy
	tab    *policy.Table
	n      int
	names  [TurnMaxTasks]string
	labels [TurnMaxTasks][turnMoveCount]string
	// scratch is where Next works out each move, and pops counts the
	// turns passed in it: one Check at a time on a model.
	scratch *TurnWorld
	pops    int
}

// TurnModel returns the turn world of policy p within bounds b, with the
// turn family's invariants.
func TurnModel(p policy.Policy, b TurnBounds) (modelcheck.Model[TurnWorld], error) {
	if p == nil {
		return modelcheck.Model[TurnWorld]{}, &ModelError{"turn", "Policy", "nil"}
	}
	if b.Tasks < 1 || b.Tasks > TurnMaxTasks {
		return modelcheck.Model[TurnWorld]{}, &ModelError{"turn", "Tasks", fmt.Sprintf("%d, want 1 to %d", b.Tasks, TurnMaxTasks)}
	}
	if b.OtherTakes < 0 || b.OtherTakes > turnMaxOtherTakes {
		return modelcheck.Model[TurnWorld]{}, &ModelError{"turn", "OtherTakes", fmt.Sprintf("%d, want 0 to %d", b.OtherTakes, turnMaxOtherTakes)}
	}
	if p.Family() != "turn" {
		return modelcheck.Model[TurnWorld]{}, &ModelError{"turn", "Policy", fmt.Sprintf("%s is of family %q, not turn", p.Name(), p.Family())}
	}
	if err := checkTable("turn", p); err != nil {
		return modelcheck.Model[TurnWorld]{}, err
	}
	m := &turnModel{p: p, tab: p.Table(), n: b.Tasks, scratch: new(TurnWorld)}
	for i := range m.n {
		m.names[i] = fmt.Sprintf("t%d", i)
		for mv := range turnMoveCount {
			m.labels[i][mv] = m.names[i] + " " + turnMoveNames[mv]
		}
	}
	model := modelcheck.Model[TurnWorld]{
		Name:       fmt.Sprintf("turn world of %s (%d tasks, %d takes by another process)", p.Name(), b.Tasks, b.OtherTakes),
		Init:       m.initial(b),
		Next:       m.next,
		Fork:       m.fork,
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

// fork returns the Next of a copy of m with a scratch world of its own,
// for one worker of a parallel search.
func (m *turnModel) fork() func(TurnWorld, func(string, TurnWorld)) {
	c := *m
	c.scratch, c.pops = new(TurnWorld), 0
	return c.next
}
