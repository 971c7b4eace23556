package turnstep_test

import (
	"slices"
	"testing"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/internal/turnstep"
	"github.com/rivus/collab/policy"
)

// lock is one lock's turn as the step reads and changes it: each task's
// state, the owner, the waiters in arrival order. It records what the step
// asks for, and says false at stopAt, as a world at its bound does.
type lock struct {
	states  map[string]policy.StateID
	waits   map[string]bool
	owner   string
	waiting []string
	handed  map[string]policy.Outputs
	did     []string

	stopAt string // "enqueue", "takeWaiter" or "handed": that method says false

	faulted      string
	faultTrigger policy.TriggerID
}

func newLock() *lock {
	return &lock{states: map[string]policy.StateID{}, waits: map[string]bool{}, handed: map[string]policy.Outputs{}}
}

func (l *lock) State(t string) policy.StateID       { return l.states[t] }
func (l *lock) SetState(t string, s policy.StateID) { l.states[t] = s }
func (l *lock) Waits(t string) bool                 { return l.waits[t] }
func (l *lock) Owns(t string) bool                  { return l.owner == t }
func (l *lock) TakeTurn(t string)                   { l.owner = t; l.do("takeTurn", t) }
func (l *lock) FreeTurn(t string)                   { l.owner = ""; l.do("freeTurn", t) }
func (l *lock) ForgetIfIdle(t string)               { l.do("forgetIfIdle", t) }
func (l *lock) Waiters(string) int                  { return len(l.waiting) }

func (l *lock) Enqueue(t string) bool {
	l.do("enqueue", t)
	if l.stopAt == "enqueue" {
		return false
	}
	l.waiting = append(l.waiting, t)
	return true
}

func (l *lock) LeaveQueue(t string) {
	l.do("leaveQueue", t)
	l.waiting = slices.DeleteFunc(l.waiting, func(w string) bool { return w == t })
}

func (l *lock) TakeWaiter(_ string, i int) (string, bool) {
	next := l.waiting[i]
	l.do("takeWaiter", next)
	if l.stopAt == "takeWaiter" {
		return "", false
	}
	l.waiting = slices.Delete(l.waiting, i, i+1)
	return next, true
}

func (l *lock) Handed(t string, out policy.Outputs) bool {
	l.handed[t] = out
	l.do("handed", t)
	return l.stopAt != "handed"
}

func (l *lock) Fault(t string, trigger policy.TriggerID) {
	l.faulted, l.faultTrigger = t, trigger
}

func (l *lock) do(what, t string) { l.did = append(l.did, what+" "+t) }

// took returns what the step did since the last call, and forgets it.
func (l *lock) took() []string {
	d := l.did
	l.did = nil
	return d
}

func want(t *testing.T, l *lock, what ...string) {
	t.Helper()
	if got := l.took(); !slices.Equal(got, what) {
		t.Fatalf("the step did %q, want %q", got, what)
	}
}

// step fires trigger at task through p and fails the test if the step
// stopped.
func step(t *testing.T, p policy.Policy, l *lock, task string, trigger policy.TriggerID, facts policy.Facts) policy.Outputs {
	t.Helper()
	out, ok := turnstep.Step[string](p, l, task, trigger, facts)
	if !ok {
		t.Fatalf("%s's step %s stopped (fault at %q)", task, p.Table().Triggers[trigger].Name, l.faulted)
	}
	return out
}

func wantState(t *testing.T, l *lock, task string, s fsm.TurnState) {
	t.Helper()
	if got := fsm.TurnState(l.states[task]); got != s {
		t.Fatalf("%s is %v, want %v", task, got, s)
	}
}

// override is a policy that answers one state and trigger with res and
// every other step as the shipped policy does: a policy whose row carries
// more queue outputs at once than any shipped row.
type override struct {
	policy.Policy
	state   fsm.TurnState
	trigger policy.TriggerID
	res     policy.Result
}

func (o override) Step(s policy.StateID, t policy.TriggerID, f policy.Facts) policy.Result {
	if fsm.TurnState(s) == o.state && t == o.trigger {
		return o.res
	}
	return o.Policy.Step(s, t, f)
}

// TestRequestTakesQueuesOrGivesUp: a Request takes the free turn, joins
// the queue when the task waits, or touches nothing when it does not; the
// wait fact comes from the runtime (Waits), not from the caller's facts,
// so a waiting and a non-waiting task fired with the same facts part
// ways. The returned outputs carry the ones the task's goroutine does.
func TestRequestTakesQueuesOrGivesUp(t *testing.T) {
	p := fsm.TurnPolicy
	for _, tc := range []struct {
		name  string
		facts policy.Facts
		wait  bool
		next  fsm.TurnState
		out   policy.Outputs
		did   []string
	}{
		{"free turn", policy.TurnFactTurnFree, false, fsm.TurnAttempting,
			policy.TurnOutputTakeTurn | policy.TurnOutputAttempt, []string{"takeTurn a", "forgetIfIdle a"}},
		{"busy, waits", 0, true, fsm.TurnWaiting,
			policy.TurnOutputEnqueue, []string{"enqueue a", "forgetIfIdle a"}},
		{"busy, does not wait", 0, false, fsm.TurnGaveUp,
			policy.TurnOutputReturnHeld, []string{"forgetIfIdle a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLock()
			l.waits["a"] = tc.wait
			out := step(t, p, l, "a", policy.TurnRequest, tc.facts)
			want(t, l, tc.did...)
			wantState(t, l, "a", tc.next)
			if out != tc.out {
				t.Fatalf("outputs %b, want %b", out, tc.out)
			}
		})
	}
}

// TestWaitersServedInArrivalOrder: each pass hands the turn to the task
// that has waited longest, runs its Turn step before it is told (so the
// turn is never free while someone waits), and a waiter that aborts
// leaves the queue without moving the others.
func TestWaitersServedInArrivalOrder(t *testing.T) {
	p := fsm.TurnPolicy
	l := newLock()
	step(t, p, l, "a", policy.TurnRequest, policy.TurnFactTurnFree)
	for _, w := range []string{"b", "c", "d"} {
		l.waits[w] = true
		step(t, p, l, w, policy.TurnRequest, 0)
	}
	want(t, l, "takeTurn a", "forgetIfIdle a", "enqueue b", "forgetIfIdle b", "enqueue c", "forgetIfIdle c", "enqueue d", "forgetIfIdle d")

	step(t, p, l, "a", policy.TurnAttemptFailed, 0)
	want(t, l, "freeTurn a", "takeWaiter b", "takeTurn b", "forgetIfIdle b", "handed b", "forgetIfIdle a")
	wantState(t, l, "b", fsm.TurnAttempting)
	if !l.handed["b"].Has(policy.TurnOutputAttempt) {
		t.Fatalf("b was handed %b, want its Turn step's attempt", l.handed["b"])
	}

	step(t, p, l, "c", policy.TurnAbort, 0)
	want(t, l, "leaveQueue c", "forgetIfIdle c")
	wantState(t, l, "c", fsm.TurnAborted)

	step(t, p, l, "b", policy.TurnBusy, 0) // b waits: it backs off, keeping the turn
	want(t, l, "forgetIfIdle b")
	step(t, p, l, "b", policy.TurnAbort, 0)
	want(t, l, "freeTurn b", "takeWaiter d", "takeTurn d", "forgetIfIdle d", "handed d", "forgetIfIdle b")
	if l.owner != "d" || len(l.waiting) != 0 {
		t.Fatalf("after the passes: owner %q, waiting %q; want d and nobody", l.owner, l.waiting)
	}
}

// TestReleasePassesAfterUnlock: Release's passTurn comes with unlock, so
// the step leaves the turn with its owner (the lock's I/O comes first)
// and the caller passes it with PassTurn; passing a turn one does not own,
// or with nobody waiting, hands nothing.
func TestReleasePassesAfterUnlock(t *testing.T) {
	p := fsm.TurnPolicy
	l := newLock()
	step(t, p, l, "a", policy.TurnRequest, policy.TurnFactTurnFree)
	step(t, p, l, "a", policy.TurnAcquired, 0)
	l.waits["b"] = true
	step(t, p, l, "b", policy.TurnRequest, 0)
	l.took()

	out := step(t, p, l, "a", policy.TurnRelease, 0)
	want(t, l, "forgetIfIdle a")
	if !out.Has(policy.TurnOutputUnlock|policy.TurnOutputPassTurn) || l.owner != "a" {
		t.Fatalf("Release: outputs %b, owner %q; want unlock and passTurn returned, a still owning", out, l.owner)
	}
	if !turnstep.PassTurn[string](p, l, "a") {
		t.Fatal("PassTurn stopped")
	}
	want(t, l, "freeTurn a", "takeWaiter b", "takeTurn b", "forgetIfIdle b", "handed b")

	if !turnstep.PassTurn[string](p, l, "a") {
		t.Fatal("a second PassTurn stopped")
	}
	want(t, l) // a no longer owns the turn
	step(t, p, l, "b", policy.TurnAcquired, 0)
	step(t, p, l, "b", policy.TurnRelease, 0)
	l.took()
	if !turnstep.PassTurn[string](p, l, "b") {
		t.Fatal("PassTurn with nobody waiting stopped")
	}
	want(t, l, "freeTurn b")
}

// TestQueueOutputsInFamilyOrder: a row with every queue output carries
// them out as the family orders them, leaveQueue, passTurn, takeTurn,
// enqueue, whatever the row lists, and forgets the idle queue last. No
// shipped row has two of them, so a policy with one row changed pins it.
func TestQueueOutputsInFamilyOrder(t *testing.T) {
	all := policy.TurnOutputLeaveQueue | policy.TurnOutputPassTurn | policy.TurnOutputTakeTurn | policy.TurnOutputEnqueue
	p := override{fsm.TurnPolicy, fsm.TurnAttempting, policy.TurnBusy,
		policy.Result{Next: policy.StateID(fsm.TurnWaiting), Outputs: all, Verdict: policy.Fired}}
	l := newLock()
	step(t, p, l, "a", policy.TurnRequest, policy.TurnFactTurnFree)
	l.waits["b"] = true
	step(t, p, l, "b", policy.TurnRequest, 0)
	l.took()

	if out := step(t, p, l, "a", policy.TurnBusy, 0); out != all {
		t.Fatalf("outputs %b, want %b", out, all)
	}
	want(t, l, "leaveQueue a", "freeTurn a", "takeWaiter b", "takeTurn b", "forgetIfIdle b", "handed b",
		"takeTurn a", "enqueue a", "forgetIfIdle a")
}

// TestRejectedTriggerIsFault: a trigger the policy rejects is reported as
// a fault of that task and stops the step before it changes anything; a
// waiter whose Turn is rejected during a pass is not handed the turn, and
// the passer's step stops too.
func TestRejectedTriggerIsFault(t *testing.T) {
	t.Run("own trigger", func(t *testing.T) {
		l := newLock()
		out, ok := turnstep.Step[string](fsm.TurnPolicy, l, "a", policy.TurnTurn, 0)
		if ok || out != 0 || l.faulted != "a" || l.faultTrigger != policy.TurnTurn {
			t.Fatalf("Turn at Idle: outputs %b, ok %v, fault at %q on %d; want a fault at a on Turn", out, ok, l.faulted, l.faultTrigger)
		}
		want(t, l)
		wantState(t, l, "a", fsm.TurnIdle)
	})
	t.Run("waiter's Turn", func(t *testing.T) {
		p := override{fsm.TurnPolicy, fsm.TurnWaiting, policy.TurnTurn,
			policy.Result{Next: policy.StateID(fsm.TurnWaiting), Verdict: policy.Rejected}}
		l := newLock()
		step(t, p, l, "a", policy.TurnRequest, policy.TurnFactTurnFree)
		l.waits["b"] = true
		step(t, p, l, "b", policy.TurnRequest, 0)
		l.took()
		if _, ok := turnstep.Step[string](p, l, "a", policy.TurnAttemptFailed, 0); ok {
			t.Fatal("the pass to a waiter that rejects Turn did not stop")
		}
		want(t, l, "freeTurn a", "takeWaiter b", "takeTurn b")
		if l.faulted != "b" || l.faultTrigger != policy.TurnTurn {
			t.Fatalf("fault at %q on %d, want at b on Turn", l.faulted, l.faultTrigger)
		}
	})
}

// TestStopsWhereRuntimeSaysFalse: a world at its bound (a full queue, a
// turn passed too often in one move, a turn handed twice) says false, and
// the step stops right there: nothing after it is carried out, not even
// forgetting the idle queue, and the row's outputs are still returned.
func TestStopsWhereRuntimeSaysFalse(t *testing.T) {
	p := fsm.TurnPolicy
	for _, tc := range []struct {
		stopAt  string
		trigger policy.TriggerID
		task    string // a owns the turn, b waits, c would wait
		did     []string
	}{
		{"enqueue", policy.TurnRequest, "c", []string{"enqueue c"}},
		{"takeWaiter", policy.TurnAttemptFailed, "a", []string{"freeTurn a", "takeWaiter b"}},
		{"handed", policy.TurnAttemptFailed, "a", []string{"freeTurn a", "takeWaiter b", "takeTurn b", "forgetIfIdle b", "handed b"}},
	} {
		t.Run(tc.stopAt, func(t *testing.T) {
			l := newLock()
			step(t, p, l, "a", policy.TurnRequest, policy.TurnFactTurnFree)
			l.waits["b"], l.waits["c"] = true, true
			step(t, p, l, "b", policy.TurnRequest, 0)
			l.took()
			l.stopAt = tc.stopAt
			var facts policy.Facts
			if l.waits[tc.task] {
				facts = policy.TurnFactWait
			}
			row := p.Step(l.states[tc.task], tc.trigger, facts)
			out, ok := turnstep.Step[string](p, l, tc.task, tc.trigger, 0)
			if ok || out != row.Outputs {
				t.Fatalf("ok %v, outputs %b; want the step stopped with %b", ok, out, row.Outputs)
			}
			want(t, l, tc.did...)
			if l.faulted != "" {
				t.Fatalf("a stop reported a fault at %q", l.faulted)
			}
		})
	}
}
