package plock

import (
	"reflect"
	"slices"
	"sync"

	"github.com/rivus/collab/internal/turnstep"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/policy"
)

// The in-process turns of every lock this process uses: the only package
// state of collab. Acquisitions of one lock take turns here, so that no
// task opens the lock against a holder in its own process.
var turns = registry{queues: map[turnKey]*turnQueue{}, changed: make(chan struct{})}

// registry maps a lock to its queue. One mutex guards every queue and
// every task's state; nothing under it does I/O.
type registry struct {
	mu     sync.Mutex
	queues map[turnKey]*turnQueue // entries are deleted when no task uses them
	// changed is closed and replaced after every step, so that tests can
	// wait for a task to reach the queue without polling.
	changed chan struct{}
	mon     turnMonitor // the contract monitor's notes (monitored builds)
}

// turnKey names a lock within this process: who opens it (the platform's
// SQLite, or without SQLite its FS) and the path with its directory
// resolved through symlinks.
type turnKey struct {
	opener any
	path   string
}

// turnQueue holds the turn of one lock.
type turnQueue struct {
	owner   *task   // the task that attempts, backs off or holds; nil when free
	waiting []*task // waiting tasks, in arrival order
	// holder is who holds the lock as the owner last learnt it: this
	// process once it holds, another process's stamp after a busy
	// attempt; nil while unknown.
	holder *platform.Identity
}

// task is one acquisition's turn, driven by the turn policy. Its state
// changes only through step, with registry.mu held.
type task struct {
	key    turnKey
	q      *turnQueue // the queue of key when the task started
	pol    policy.Policy
	state  policy.StateID
	wait   bool
	turned chan struct{}      // closed when the turn is handed to this task
	handed policy.Outputs     // the outputs of the Turn step run by the passer
	seen   *platform.Identity // the queue's holder when the task started
}

// Triggers, facts and outputs of the turn family, as the policy numbers them.
const (
	trRequest       = policy.TurnRequest
	trTurn          = policy.TurnTurn
	trAcquired      = policy.TurnAcquired
	trBusy          = policy.TurnBusy
	trAttemptFailed = policy.TurnAttemptFailed
	trRetry         = policy.TurnRetry
	trAbort         = policy.TurnAbort
	trRelease       = policy.TurnRelease

	factTurnFree = policy.TurnFactTurnFree
	factWait     = policy.TurnFactWait

	outLeaveQueue  = policy.TurnOutputLeaveQueue
	outUnlock      = policy.TurnOutputUnlock
	outPassTurn    = policy.TurnOutputPassTurn
	outTakeTurn    = policy.TurnOutputTakeTurn
	outEnqueue     = policy.TurnOutputEnqueue
	outAttempt     = policy.TurnOutputAttempt
	outBackoff     = policy.TurnOutputBackoff
	outReturnLock  = policy.TurnOutputReturnLock
	outReturnHeld  = policy.TurnOutputReturnHeld
	outReturnError = policy.TurnOutputReturnError
	outReturnCause = policy.TurnOutputReturnCause
)

// newTurnKey builds the key of a lock. An opener that is not comparable
// (a user's platform implementation that holds a func, a map or a slice)
// shares turns with every opener of its type: telling such values apart
// would take reflect.Value.Pointer, which links some 50 kB of reflection
// into every program that takes a lock, and a shared turn only queues
// tasks that could have attempted side by side; it never lets two into
// one lock.
func newTurnKey(opener any, path string) turnKey {
	if opener != nil && !reflect.ValueOf(opener).Comparable() {
		opener = reflect.TypeOf(opener)
	}
	return turnKey{opener, path}
}

// request starts a task and runs its Request step: the bookkeeping
// outputs (takeTurn, enqueue) are carried out here; the others are
// returned for the task's goroutine.
func (r *registry) request(key turnKey, pol policy.Policy, wait bool) (*task, policy.Outputs) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queues[key]
	if q == nil {
		q = &turnQueue{}
		r.queues[key] = q
	}
	t := &task{key: key, q: q, pol: pol, state: pol.Initial(), wait: wait, turned: make(chan struct{}), seen: q.holder}
	var facts policy.Facts
	if q.owner == nil && len(q.waiting) == 0 {
		facts |= factTurnFree
	}
	return t, r.stepLocked(t, trRequest, facts)
}

// fire runs one step of t and carries out its bookkeeping outputs.
func (r *registry) fire(t *task, trigger policy.TriggerID) policy.Outputs {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stepLocked(t, trigger, 0)
}

// fireSeen is fire for an attempt's outcome, which tells who holds the
// lock.
func (r *registry) fireSeen(t *task, trigger policy.TriggerID, holder *platform.Identity) policy.Outputs {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.q.owner == t {
		t.q.holder = holder
	}
	return r.stepLocked(t, trigger, 0)
}

// stepLocked steps t, carries out the outputs that only touch the queue
// (internal/turnstep, the code the turn world of package worldmodel
// checks), and returns all outputs. A rejected trigger is a bug of the
// runtime or of a custom policy, so it panics with the evidence.
func (r *registry) stepLocked(t *task, trigger policy.TriggerID, facts policy.Facts) policy.Outputs {
	out, _ := turnstep.Step[*task](t.pol, turnBook{r}, t, trigger, facts)
	r.notifyLocked()
	return out
}

// notifyLocked wakes the watchers of the registry: tests that wait for a
// task to reach a queue.
func (r *registry) notifyLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// passTurnLocked ends from's turn and hands it to the longest waiter.
func (r *registry) passTurnLocked(from *task) {
	turnstep.PassTurn[*task](from.pol, turnBook{r}, from)
	r.notifyLocked()
}

// finishRelease passes the turn on once the lock itself has been released.
func (r *registry) finishRelease(t *task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.passTurnLocked(t)
	r.forgetIfIdleLocked(t.key, t.q)
}

// turnBook is the registry as turnstep reads and changes it, with r.mu
// held.
type turnBook struct{ r *registry }

func (b turnBook) State(t *task) policy.StateID       { return t.state }
func (b turnBook) SetState(t *task, s policy.StateID) { t.state = s }
func (b turnBook) Waits(t *task) bool                 { return t.wait }
func (b turnBook) Owns(t *task) bool                  { return t.q.owner == t }
func (b turnBook) TakeTurn(t *task)                   { t.q.owner = t }
func (b turnBook) FreeTurn(t *task)                   { t.q.owner, t.q.holder = nil, nil }
func (b turnBook) ForgetIfIdle(t *task)               { b.r.forgetIfIdleLocked(t.key, t.q) }

func (b turnBook) Enqueue(t *task) bool {
	// A task may wait more than once under a custom policy: each wait
	// gets a fresh signal.
	t.turned, t.handed = make(chan struct{}), 0
	t.q.waiting = append(t.q.waiting, t)
	return true
}

func (b turnBook) LeaveQueue(t *task) {
	t.q.waiting = slices.DeleteFunc(t.q.waiting, func(w *task) bool { return w == t })
}

func (b turnBook) Waiters(t *task) int { return len(t.q.waiting) }

func (b turnBook) TakeWaiter(t *task, i int) (*task, bool) {
	next := t.q.waiting[i]
	t.q.waiting = slices.Delete(t.q.waiting, i, i+1)
	return next, true
}

func (b turnBook) Handed(t *task, out policy.Outputs) bool {
	t.handed = out
	close(t.turned)
	return true
}

func (b turnBook) Fault(t *task, trigger policy.TriggerID) {
	panic("plock: turn policy " + t.pol.Name() + " rejected " + t.pol.Table().Triggers[trigger].Name +
		" in state " + t.pol.Table().States[t.state].Name)
}

// forgetIfIdleLocked deletes q's entry once nobody holds or waits, so the
// registry does not grow with every lock ever taken; a later acquisition
// makes a new queue.
func (r *registry) forgetIfIdleLocked(key turnKey, q *turnQueue) {
	if q.owner == nil && len(q.waiting) == 0 && r.queues[key] == q {
		delete(r.queues, key)
	}
}

// busy reports whether a task of this process attempts or holds the lock,
// and who holds it as far as that task knows.
func (r *registry) busy(key turnKey) (bool, *platform.Identity) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queues[key]
	if q == nil || q.owner == nil {
		return false, nil
	}
	return true, q.holder
}

// busyPath reports whether a task of this process attempts or holds the
// lock at path through any opener: the kernel's lock query cannot see
// this process's own locks, whichever SQLite value took them.
func (r *registry) busyPath(path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, q := range r.queues {
		if key.path == path && q.owner != nil {
			return true
		}
	}
	return false
}

// claimTurn is called by a waiting task that woke: it returns the outputs
// of the Turn step if the turn was handed to it, or else aborts it (it
// woke because its context ended).
func (r *registry) claimTurn(t *task) policy.Outputs {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-t.turned:
		return t.handed
	default:
		return r.stepLocked(t, trAbort, 0)
	}
}

// watch returns a channel that is closed after the next step of any task.
func (r *registry) watch() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// turnSignal returns the channel that is closed when the turn is handed
// to t; read under the lock, since a custom policy may make t wait again.
func (r *registry) turnSignal(t *task) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return t.turned
}
