// Package turnstep is the process lock's in-process turn step: the one
// implementation of what a turn policy's queue outputs do to a lock's
// turn (its owner and its waiters, served in arrival order), run by
// package plock's turn registry and by package worldmodel's turn world, so
// that a bug here is a model-checking violation with a shortest trace, not
// only a failing unit test.
//
// A step fires one trigger at one task through the policy, with the facts
// of that moment (the wait fact added from the task), writes the task's
// next state, and carries out, in the family's order, the outputs that
// touch only the queue: leaveQueue, passTurn (unless unlock comes with
// it: then the lock's I/O comes first, and the caller passes the turn with
// [PassTurn] once it is done), takeTurn and enqueue. The other outputs are
// returned for the task's goroutine to carry out.
//
// The caller's duties:
//
//  1. Hold the registry's lock across Step and PassTurn: they read and
//     change the queue and do no I/O.
//  2. Carry out the returned outputs that are not the queue's (unlock,
//     attempt, backoff, the returns) in the task's goroutine, with the
//     lock released.
//  3. Fire only the triggers the turn family's doc allows for the task's
//     phase; a rejection is a [Refused] fault.
package turnstep

import "github.com/rivus/collab/policy"

// Runtime is the turn bookkeeping a step reads and changes, of the runtime
// or of a world; T names a task, and each task knows the queue of its
// lock.
type Runtime[T comparable] interface {
	State(t T) policy.StateID
	SetState(t T, s policy.StateID)
	Waits(t T) bool // the task waits for the lock (Options.Wait)

	Owns(t T) bool // t owns its lock's turn
	TakeTurn(t T)
	// FreeTurn frees the turn of t's lock, which t owns, with what it
	// learnt of the lock's holder.
	FreeTurn(t T)
	// Enqueue puts t at the back of its lock's waiters, with a fresh
	// signal for the turn; false stops the step (a world at its bound).
	Enqueue(t T) bool
	LeaveQueue(t T)  // takes t out of its lock's waiters, wherever it is
	Waiters(t T) int // how many tasks wait for t's lock
	// TakeWaiter takes the i-th waiter of t's lock, in arrival order, out
	// of the queue; false stops the step (a world at its bound).
	TakeWaiter(t T, i int) (T, bool)
	ForgetIfIdle(t T)                    // drops t's lock's queue when nobody owns or waits
	Handed(t T, out policy.Outputs) bool // t got the turn, with its Turn step's outputs; false stops

	// Fault hears a trigger the policy refused; the step stops after it.
	// The runtime panics.
	Fault(t T, trigger policy.TriggerID)
}

// Step fires trigger at t through p with facts (and the wait fact of t),
// writes t's next state and carries out the queue's outputs in the
// family's order. It returns the outputs, and false if the step stopped.
func Step[T comparable, R Runtime[T]](p policy.Policy, r R, t T, trigger policy.TriggerID, facts policy.Facts) (policy.Outputs, bool) {
	if r.Waits(t) {
		facts |= policy.TurnFactWait
	}
	res := p.Step(r.State(t), trigger, facts)
	if res.Verdict == policy.Rejected {
		r.Fault(t, trigger)
		return 0, false
	}
	r.SetState(t, res.Next)
	out := res.Outputs
	if out.Has(policy.TurnOutputLeaveQueue) {
		r.LeaveQueue(t)
	}
	if out.Has(policy.TurnOutputPassTurn) && !out.Has(policy.TurnOutputUnlock) {
		if !PassTurn(p, r, t) {
			return out, false
		}
	}
	if out.Has(policy.TurnOutputTakeTurn) {
		r.TakeTurn(t)
	}
	if out.Has(policy.TurnOutputEnqueue) && !r.Enqueue(t) {
		return out, false
	}
	r.ForgetIfIdle(t)
	return out, true
}

// PassTurn ends from's turn, if it owns it, and hands it to the longest
// waiter, whose Turn step runs here so that the turn is never free while
// someone waits. It returns false if a step stopped.
func PassTurn[T comparable, R Runtime[T]](p policy.Policy, r R, from T) bool {
	if !r.Owns(from) {
		return true
	}
	r.FreeTurn(from)
	if r.Waiters(from) == 0 {
		return true
	}
	next, ok := r.TakeWaiter(from, 0) // the longest-waiting
	if !ok {
		return false
	}
	r.TakeTurn(next)
	out, ok := Step(p, r, next, policy.TurnTurn, 0)
	return ok && r.Handed(next, out)
}
