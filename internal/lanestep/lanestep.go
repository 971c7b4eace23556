// Package lanestep is the lanes runtime's step: the one implementation of
// what a lane policy's outputs do to the runtime's bookkeeping (the queue,
// the queue places, the slots and the starts), of the facts a step sees,
// and of the grants of free slots to waiting lanes. Package lanes runs it
// over its lanes, and package worldmodel's lane world runs it over its
// compact worlds, so that a bug here is a model-checking violation with a
// shortest trace, not only a failing unit test.
//
// A step fires one trigger at one lane through the policy, with the facts
// of that moment, writes the lane's next state, and carries out the
// outputs in the family's order, checking first that each can be carried
// out. An output that cannot (dequeue a lane that does not wait, start a
// second activation of one key, ...) is a [Fault] of a policy that does not
// fit the runtime: the step stops there. After a step, [Grant] hands free
// slots to the lanes that waited longest.
//
// The caller's duties:
//
//  1. Hold whatever lock guards the bookkeeping across Step and Grant: they
//     read and change it and do no I/O.
//  2. Call Grant after every Step that may have freed a slot or queued a
//     lane, and only then; Grant's own steps never grant again.
//  3. Fire a trigger other than Wake only where the lane must handle it (a
//     rejection of one is a Fault; a rejected Wake is an answer, ErrClosed).
//  4. Carry out the effects the Runtime's methods name (an activation's
//     goroutine, a cancellation, an OnExit report) once the lock is
//     released, in the order they were asked for.
package lanestep

import "github.com/rivus/collab/policy"

// Limits are the runtime's bounds: MaxConcurrent slots (at least 1), and
// MaxQueued queue places for waiting lanes and owed follow-ups (0: no
// bound; negative: none).
type Limits struct {
	MaxConcurrent int
	MaxQueued     int
}

// Runtime is the bookkeeping a step reads and changes, of the runtime or
// of a world; L names one lane. Step checks every precondition before it
// calls a method that changes something, so implementations need not.
type Runtime[L comparable] interface {
	State(l L) policy.StateID
	SetState(l L, s policy.StateID)

	Queued(l L) bool
	QueueLen() int
	Head() L // the longest-waiting lane; only while QueueLen() > 0
	Enqueue(l L)
	// Dequeue takes l out of the queue; out is the step's outputs (with
	// start among them, l leaves the queue to run).
	Dequeue(l L, out policy.Outputs)

	Reserved(l L) bool // l holds a queue place for an owed follow-up
	SetReserved(l L, held bool)
	Places() int // queue places held by owed follow-ups

	HoldsSlot(l L) bool // l's activation holds a slot
	SlotsInUse() int
	// Start takes a slot for an activation of l, fired by t.
	Start(l L, t policy.TriggerID)
	ReleaseSlot(l L)
	// Interrupt cancels l's running activation, if one runs, because of t.
	Interrupt(l L, t policy.TriggerID)
	// Forget deletes l's entry.
	Forget(l L)
	// ReportInterrupted reports an owed activation of l that t dropped
	// before it started.
	ReportInterrupted(l L, t policy.TriggerID)

	// Fired hears a step the policy took (Verdict Fired) before its
	// outputs are carried out, and says whether to carry them out: a
	// world checks the step there; the runtime returns true.
	Fired(l L, t policy.TriggerID, r policy.Result) bool
	// Fault hears an output the runtime cannot carry out, or a trigger the
	// policy refused; the step stops after it. The runtime panics.
	Fault(l L, f Fault, t policy.TriggerID)
}

// Fault is what a policy asked that the runtime cannot do.
type Fault uint8

// The faults, each a policy that does not fit the runtime.
const (
	Refused         Fault = iota + 1 // rejected a trigger other than Wake
	DequeueUnqueued                  // dequeue of a lane that does not wait
	UnreserveNone                    // unreserve by a lane that holds no place
	ReleaseNone                      // releaseSlot by a lane that holds no slot
	ReserveHeld                      // reserve by a lane that holds a place
	EnqueueQueued                    // enqueue of a lane that waits already
	StartRunning                     // start of a second activation of one key
	StrayAnswer                      // a Wake answer output by another trigger
	GrantKept                        // SlotGranted left the lane in the queue
)

var faultText = [...]string{
	Refused:         "refuse a trigger it must handle",
	DequeueUnqueued: "dequeue a lane that does not wait",
	UnreserveNone:   "give back a queue place nobody holds",
	ReleaseNone:     "release a slot the lane does not hold",
	ReserveHeld:     "reserve a second queue place for one lane",
	EnqueueQueued:   "enqueue a lane that already waits",
	StartRunning:    "start a second activation of one key",
	StrayAnswer:     "answer a Wake that is not waiting for an answer",
	GrantKept:       "leave the queue's head waiting after SlotGranted",
}

// String says what the policy asked, as "start a second activation of one
// key".
func (f Fault) String() string {
	if int(f) < len(faultText) && faultText[f] != "" {
		return faultText[f]
	}
	return "do what the runtime does not know"
}

// answers are the outputs that answer a Wake.
const answers = policy.LaneOutputStarted | policy.LaneOutputQueued | policy.LaneOutputCoalesced | policy.LaneOutputQueueFull

// Facts computes the facts every lane step sees.
func Facts[L comparable, R Runtime[L]](lim Limits, r R) policy.Facts {
	var f policy.Facts
	if r.QueueLen() == 0 {
		f |= policy.LaneFactQueueEmpty
		if r.SlotsInUse() < lim.MaxConcurrent {
			f |= policy.LaneFactSlotFree
		}
	}
	if lim.MaxQueued == 0 || lim.MaxQueued > 0 && r.QueueLen()+r.Places() < lim.MaxQueued {
		f |= policy.LaneFactQueueRoom
	}
	return f
}

// Step fires t at l through p with the facts of this moment, writes l's
// next state and carries out the outputs in the family's order. It
// returns the policy's result, and false if the step stopped at a Fault
// or because Fired said so.
func Step[L comparable, R Runtime[L]](p policy.Policy, lim Limits, r R, l L, t policy.TriggerID) (policy.Result, bool) {
	res := p.Step(r.State(l), t, Facts[L](lim, r))
	switch res.Verdict {
	case policy.Rejected:
		if t == policy.LaneWake {
			return res, true // after Close: Wake answers ErrClosed
		}
		r.Fault(l, Refused, t)
		return res, false
	case policy.Ignored:
		return res, true
	}
	r.SetState(l, res.Next)
	if !r.Fired(l, t, res) {
		return res, false
	}
	return res, apply(r, l, t, res.Outputs)
}

// apply carries out out, fired by t at l, in the family's order; it
// stops at the first output that cannot be carried out.
func apply[L comparable, R Runtime[L]](r R, l L, t policy.TriggerID, out policy.Outputs) bool {
	fault := func(f Fault) bool {
		r.Fault(l, f, t)
		return false
	}
	if out&answers != 0 && t != policy.LaneWake {
		return fault(StrayAnswer)
	}
	if out.Has(policy.LaneOutputDequeue) {
		if !r.Queued(l) {
			return fault(DequeueUnqueued)
		}
		r.Dequeue(l, out)
	}
	if out.Has(policy.LaneOutputUnreserve) {
		if !r.Reserved(l) {
			return fault(UnreserveNone)
		}
		r.SetReserved(l, false)
	}
	if out.Has(policy.LaneOutputInterrupt) {
		r.Interrupt(l, t)
	}
	if out.Has(policy.LaneOutputReleaseSlot) {
		if !r.HoldsSlot(l) {
			return fault(ReleaseNone)
		}
		r.ReleaseSlot(l)
	}
	if out.Has(policy.LaneOutputReserve) {
		if r.Reserved(l) {
			return fault(ReserveHeld)
		}
		r.SetReserved(l, true)
	}
	if out.Has(policy.LaneOutputEnqueue) {
		if r.Queued(l) {
			return fault(EnqueueQueued)
		}
		r.Enqueue(l)
	}
	if out.Has(policy.LaneOutputStart) {
		if r.HoldsSlot(l) {
			return fault(StartRunning)
		}
		r.Start(l, t)
	}
	if out.Has(policy.LaneOutputForget) {
		r.Forget(l)
	}
	if out.Has(policy.LaneOutputReportInterrupted) {
		r.ReportInterrupted(l, t)
	}
	return true
}

// Grant hands free slots to the lanes that waited longest: while a slot
// is free and a lane waits, it fires SlotGranted at the queue's head,
// which must leave the queue. It returns false if a step stopped at a
// Fault.
func Grant[L comparable, R Runtime[L]](p policy.Policy, lim Limits, r R) bool {
	for r.QueueLen() > 0 && r.SlotsInUse() < lim.MaxConcurrent {
		head := r.Head()
		if _, ok := Step(p, lim, r, head, policy.LaneSlotGranted); !ok {
			return false
		}
		if r.Queued(head) {
			r.Fault(head, GrantKept, policy.LaneSlotGranted)
			return false
		}
	}
	return true
}
