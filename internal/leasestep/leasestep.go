// Package leasestep is the lease runtime's step: the one implementation of
// what a lease policy's outputs do to a handle and its manager. Package
// lease runs it over its handles, under its manager's lock, and package
// worldmodel's lease world runs it over its compact worlds, so that a bug
// here is a model-checking violation with a shortest trace, not only a
// failing unit test or a campaign's late catch.
//
// The step decides:
//
//   - which repository call comes next, and its write: a claim writes one
//     generation above the record just loaded over that record's
//     revision, a renewal the handle's token over the revision of its own
//     last write, a tombstone the token, released, over the revision just
//     loaded;
//   - the facts of a loaded record: free (no record, or a tombstone),
//     holder dead (as the platform judged it), silent for the TTL since
//     this manager first saw that revision (the step keeps the manager's
//     sighting), and still ours, by generation;
//   - which trigger a call's answer fires, and where the deadline starts:
//     at the start of the write whose success is being handled;
//   - which timers arm, when Acquire and Close return, when a handle ends,
//     and how a fence request is answered.
//
// Time and I/O stay at the edges. An [Env] carries out the effects: the
// manager turns instants into durations on its monotonic clock and makes
// the calls; the world turns them into flags of its state. An output that
// cannot be carried out where it comes (a claim outside an acquisition's
// read, a second call in flight, ...) is a [Fault] of a policy that does
// not fit the runtime: the step stops there.
//
// The caller's duties:
//
//  1. Hold whatever lock guards the handle and its manager's sightings
//     across a step: it reads and changes them and does no I/O.
//  2. Make the call the step asked for (Handle.Call, Handle.Write) and
//     answer it with [Answered], once, before firing anything but a timer
//     or a fence at the handle; fire [Release] only with no call in
//     flight.
//  3. Fire RenewDue and DeadlinePassed only while their timer is armed,
//     each at most once per arming.
//  4. Fire [FenceTaken] only while a RunFenced call of the handle holds
//     the repository's fence, with the record read under it.
//  5. Judge a loaded record's holder (Record.Liveness) before the step,
//     outside any lock: judging is I/O.
package leasestep

import (
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/policy"
)

// Call is the repository call a handle has in flight.
type Call uint8

// The calls.
const (
	CallNone Call = iota
	CallLoad
	CallClaim
	CallRenew
	CallTombstone
)

var callNames = [...]string{"", "load", "claim", "renew", "tombstone"}

func (c Call) String() string {
	if int(c) < len(callNames) {
		return callNames[c]
	}
	return "call?"
}

// Life is a handle's life as its caller sees it.
type Life uint8

// The lives of a handle.
const (
	LifeIdle      Life = iota // Acquire has not been fired, or it failed
	LifeAcquiring             // Acquire has not returned
	LifeHeld                  // Acquire returned the handle
	LifeEnded                 // endHandle: the handle is over
)

// Write is the save a handle asks for.
type Write struct {
	Generation store.Token
	Released   bool
	Expected   store.Revision
}

// Record is a loaded record as the step reads it.
type Record struct {
	Revision   store.Revision // 0: no record
	Generation store.Token
	Free       bool // no record, or a tombstone
	// Liveness is how the platform judged the holder of a record that is
	// not free (the caller's duty 5).
	Liveness platform.Liveness
}

// Result is how the repository answered a call.
type Result uint8

// The results.
const (
	OK       Result = iota // a load returned a record, or a save succeeded
	Conflict               // a save met a revision conflict
	Failed                 // the call failed otherwise, or its context ended
)

// Answer is a repository call's answer.
type Answer struct {
	Result Result
	Rec    Record         // a load's record
	Rev    store.Revision // a save's new revision
}

// Handle is one lease handle's bookkeeping. T is the runtime's instant:
// a reading of the manager's monotonic clock, a symbolic moment in the
// world.
//
// Its invariants, which the step keeps: Call is CallNone unless Life is
// LifeAcquiring or LifeHeld; Write is the write of the call in flight when
// Call is a write; Token is the claimed generation from the claim's issue
// on; Wrote and WriteStart are of the last write that succeeded.
type Handle[T comparable] struct {
	State policy.StateID
	Life  Life
	Call  Call // the repository call in flight
	// Closing says Release has fired: Close is pending until endHandle.
	Closing bool
	// Lost says declareLost has been carried out.
	Lost  bool
	Token store.Token
	Write Write
	// Wrote is the revision of the handle's last successful write: a
	// renewal is written over it.
	Wrote store.Revision
	// Read is the record the handle's last load returned: a claim and a
	// tombstone are written over its revision.
	Read Record
	// CallStart is when the call in flight started; WriteStart when the
	// last successful write started, the deadline's start.
	CallStart, WriteStart T
}

// Env carries out a step's effects for one handle, and keeps its
// manager's sighting of the handle's key.
type Env[T comparable] interface {
	// Now reads the clock the deadline is counted on.
	Now() T

	// Sighting returns the revision of the key this manager saw first
	// and still notes, if any; Sight notes rev as first seen now; Unsight
	// forgets the note. Silent reports whether the TTL has passed since
	// the note.
	Sighting() (store.Revision, bool)
	Sight(rev store.Revision)
	Unsight()
	Silent() bool

	StopTimers()
	// ArmDeadline makes DeadlinePassed fire TTL (less the loss margin)
	// after from.
	ArmDeadline(from T)
	ScheduleRenew()
	ScheduleRetry()
	DeclareLost()
	// AnswerFence answers the RunFenced call that holds the fence: run
	// the work, or refuse it.
	AnswerFence(run bool)
	// Acquired, HeldError and RepoError answer the pending Acquire (and
	// RepoError a pending Close); EndHandle ends the handle.
	Acquired()
	HeldError()
	RepoError()
	EndHandle()

	// Fault hears a trigger the policy rejected or an output the runtime
	// cannot carry out (o, or 0 for a fault of no single output); the
	// step stops after it. The runtime panics; a world records it.
	Fault(f Fault, t policy.TriggerID, o policy.Outputs)
}

// Fault is what a policy asked that the runtime cannot do.
type Fault uint8

// The faults, each a policy that does not fit the runtime.
const (
	Rejected   Fault = iota + 1 // a trigger the runtime fires only where it must be handled was rejected
	BadState                    // the step named a state the policy lacks
	Misplaced                   // an output where the runtime cannot carry it out
	SecondCall                  // a repository call while one is in flight
	NoAnswer                    // FenceTaken answered with both or neither of runFenced and refuseFenced
	CallLeft                    // the handle ended, or was dropped, with a call in flight
)

var faultText = [...]string{
	Rejected:   "reject a trigger the runtime fires only where it must be handled",
	BadState:   "step to a state the policy does not have",
	Misplaced:  "ask for an output the runtime cannot carry out in this step",
	SecondCall: "ask for a repository call while one is in flight",
	NoAnswer:   "answer FenceTaken with both or neither of runFenced and refuseFenced",
	CallLeft:   "end or drop the handle with a repository call in flight",
}

func (f Fault) String() string {
	if int(f) < len(faultText) && faultText[f] != "" {
		return faultText[f]
	}
	return "do what the runtime does not know"
}

// The family's outputs that make a call, answer a fence, or answer a
// caller.
const (
	calls        = policy.LeaseOutputLoad | policy.LeaseOutputClaim | policy.LeaseOutputRenew | policy.LeaseOutputTombstone
	fenceAnswers = policy.LeaseOutputRunFenced | policy.LeaseOutputRefuseFenced
)

// Step is one step as it was taken: from which state, on which trigger
// with which facts, and the policy's result.
type Step struct {
	From    policy.StateID
	Trigger policy.TriggerID
	Facts   policy.Facts
	Result  policy.Result
}

// Outputs returns the outputs of a step that fired, else 0.
func (s Step) Outputs() policy.Outputs {
	if s.Result.Verdict != policy.Fired {
		return 0
	}
	return s.Result.Outputs
}

// Acquire starts h's acquisition.
func Acquire[T comparable, E Env[T]](p policy.Policy, e E, h *Handle[T]) Step {
	h.Life = LifeAcquiring
	return fire(p, e, h, policy.LeaseAcquire, 0, CallNone)
}

// Release fires Release at h, which has no call in flight: its Close.
func Release[T comparable, E Env[T]](p policy.Policy, e E, h *Handle[T]) Step {
	h.Closing = true
	return fire(p, e, h, policy.LeaseRelease, 0, CallNone)
}

// RenewDue fires h's renewal timer.
func RenewDue[T comparable, E Env[T]](p policy.Policy, e E, h *Handle[T]) Step {
	return fire(p, e, h, policy.LeaseRenewDue, 0, CallNone)
}

// DeadlinePassed fires h's deadline.
func DeadlinePassed[T comparable, E Env[T]](p policy.Policy, e E, h *Handle[T]) Step {
	return fire(p, e, h, policy.LeaseDeadlinePassed, 0, CallNone)
}

// FenceTaken fires FenceTaken at h, whose RunFenced call holds the fence
// and read rec under it.
func FenceTaken[T comparable, E Env[T]](p policy.Policy, e E, h *Handle[T], rec Record) Step {
	return fire(p, e, h, policy.LeaseFenceTaken, Facts(e, h, rec), CallNone)
}

// Answered delivers the answer to h's call in flight and fires what it
// says: Loaded with the facts of the record, Saved, Conflict, or
// RepoFailed.
func Answered[T comparable, E Env[T]](p policy.Policy, e E, h *Handle[T], a Answer) Step {
	call := h.Call
	h.Call = CallNone
	switch {
	case a.Result == Failed:
		return fire(p, e, h, policy.LeaseRepoFailed, 0, call)
	case call == CallLoad:
		h.Read = a.Rec
		return fire(p, e, h, policy.LeaseLoaded, Facts(e, h, a.Rec), call)
	case a.Result == Conflict:
		return fire(p, e, h, policy.LeaseConflict, 0, call)
	}
	h.Wrote, h.WriteStart = a.Rev, h.CallStart
	if call == CallClaim {
		e.Unsight() // the record is ours now: a later sighting starts afresh
	}
	return fire(p, e, h, policy.LeaseSaved, 0, call)
}

// Facts computes the facts of rec as h reads it. An acquisition's read
// gives recordFree, holderDead, ttlElapsed and holderLocal, and notes the manager's
// first sighting of the revision (forgotten once the key is free); a
// returned handle's read gives recordOurs only.
func Facts[T comparable, E Env[T]](e E, h *Handle[T], rec Record) policy.Facts {
	if h.Life != LifeAcquiring {
		if !rec.Free && rec.Generation == h.Token {
			return policy.LeaseFactRecordOurs
		}
		return 0
	}
	if rec.Free {
		e.Unsight()
		return policy.LeaseFactRecordFree
	}
	var f policy.Facts
	if rec.Liveness == platform.Dead {
		f |= policy.LeaseFactHolderDead
	}
	if rec.Liveness != platform.Remote {
		f |= policy.LeaseFactHolderLocal
	}
	if rev, ok := e.Sighting(); !ok || rev != rec.Revision {
		e.Sight(rec.Revision)
	}
	if e.Silent() {
		f |= policy.LeaseFactTtlElapsed
	}
	return f
}

// fire steps h with trigger t and facts f and carries out the outputs in
// the family's order; answered is the call whose answer t reports.
func fire[T comparable, E Env[T]](p policy.Policy, e E, h *Handle[T], t policy.TriggerID, f policy.Facts, answered Call) Step {
	s := Step{From: h.State, Trigger: t, Facts: f, Result: p.Step(h.State, t, f)}
	switch r := s.Result; {
	case r.Verdict == policy.Ignored:
	case r.Verdict != policy.Fired:
		e.Fault(Rejected, t, 0)
	case int(r.Next) >= len(p.Table().States):
		e.Fault(BadState, t, 0)
	default:
		h.State = r.Next
		apply(e, h, t, r.Outputs, answered)
	}
	return s
}

// apply carries out out, fired by t, in the family's order; it stops at
// the first output that cannot be carried out.
func apply[T comparable, E Env[T]](e E, h *Handle[T], t policy.TriggerID, out policy.Outputs, answered Call) {
	misplaced := func(o policy.Outputs) { e.Fault(Misplaced, t, o) }
	if out.Has(policy.LeaseOutputStopTimers) {
		e.StopTimers()
	}
	if out&calls != 0 && !issue(e, h, t, out) {
		return
	}
	if out.Has(policy.LeaseOutputArmDeadline) {
		e.ArmDeadline(h.WriteStart)
	}
	if out.Has(policy.LeaseOutputScheduleRenew) {
		e.ScheduleRenew()
	}
	if out.Has(policy.LeaseOutputScheduleRetry) {
		e.ScheduleRetry()
	}
	if out.Has(policy.LeaseOutputDeclareLost) {
		h.Lost = true
		e.DeclareLost()
	}
	switch a := out & fenceAnswers; {
	case a != 0 && t != policy.LeaseFenceTaken:
		misplaced(a & -a)
		return
	case t == policy.LeaseFenceTaken && (a == 0 || a == fenceAnswers):
		e.Fault(NoAnswer, t, 0)
		return
	case a != 0:
		e.AnswerFence(a == policy.LeaseOutputRunFenced)
	}
	if out.Has(policy.LeaseOutputAcquired) {
		if h.Life != LifeAcquiring || t != policy.LeaseSaved || answered != CallClaim {
			misplaced(policy.LeaseOutputAcquired)
			return
		}
		h.Life = LifeHeld
		e.Acquired()
	}
	if out.Has(policy.LeaseOutputHeldError) {
		if h.Life != LifeAcquiring {
			misplaced(policy.LeaseOutputHeldError)
			return
		}
		h.Life = LifeIdle
		e.HeldError()
	}
	if out.Has(policy.LeaseOutputRepoError) {
		switch {
		case h.Life == LifeAcquiring:
			h.Life = LifeIdle
		case h.Life != LifeHeld || !h.Closing:
			misplaced(policy.LeaseOutputRepoError)
			return
		}
		e.RepoError()
	}
	if out.Has(policy.LeaseOutputEndHandle) {
		if h.Life != LifeHeld {
			misplaced(policy.LeaseOutputEndHandle)
			return
		}
		h.Life = LifeEnded
		e.EndHandle()
	}
	if (h.Life == LifeIdle || h.Life == LifeEnded) && h.Call != CallNone {
		e.Fault(CallLeft, t, 0)
	}
}

// issue starts the one repository call among out, and reports whether it
// could.
func issue[T comparable, E Env[T]](e E, h *Handle[T], t policy.TriggerID, out policy.Outputs) bool {
	c := out & calls
	if c&(c-1) != 0 || h.Call != CallNone {
		e.Fault(SecondCall, t, c&-c)
		return false
	}
	var (
		call Call
		w    Write
	)
	switch c {
	case policy.LeaseOutputLoad:
		call = CallLoad
	case policy.LeaseOutputClaim:
		if h.Life != LifeAcquiring || t != policy.LeaseLoaded {
			e.Fault(Misplaced, t, c)
			return false
		}
		// One above the loaded generation, tombstones included; over
		// the loaded revision (0 when there was no record).
		call, w = CallClaim, Write{Generation: h.Read.Generation + 1, Expected: h.Read.Revision}
		h.Token = w.Generation
	case policy.LeaseOutputRenew:
		if h.Life != LifeHeld {
			e.Fault(Misplaced, t, c)
			return false
		}
		call, w = CallRenew, Write{Generation: h.Token, Expected: h.Wrote}
	default: // tombstone
		if h.Life != LifeHeld || t != policy.LeaseLoaded {
			e.Fault(Misplaced, t, c)
			return false
		}
		call, w = CallTombstone, Write{Generation: h.Token, Released: true, Expected: h.Read.Revision}
	}
	h.Call, h.Write, h.CallStart = call, w, e.Now()
	return true
}

// Member is one handle of a manager's batch of renewals, with its Env.
type Member[T comparable, E Env[T]] struct {
	Env E
	H   *Handle[T]
}

// CollectDue fires RenewDue at every handle of due, whose renewal timers
// the manager found due together, and returns those whose step asked for
// a renewal, in due's order and in due's memory: the batch to write, in
// one transaction where the repository can. A handle with a call in
// flight (a Close's read) has its timer consumed and writes nothing, so
// that the timer does not fall due again and again. each, if not nil,
// hears every handle's step.
func CollectDue[T comparable, E Env[T]](p policy.Policy, due []Member[T, E], each func(d Member[T, E], s Step)) []Member[T, E] {
	batch := due[:0]
	for _, d := range due {
		busy := d.H.Call != CallNone
		s := RenewDue(p, d.Env, d.H)
		if each != nil {
			each(d, s)
		}
		if !busy && d.H.Call == CallRenew {
			batch = append(batch, d)
		}
	}
	return batch
}

// AnswerBatch answers every member of a batch, in order, with its own
// write's answer: a[i] answers batch[i], whatever the others' were, since
// a store may apply some writes of a batch and refuse others. each, if
// not nil, hears every member's step.
func AnswerBatch[T comparable, E Env[T]](p policy.Policy, batch []Member[T, E], a []Answer, each func(i int, s Step)) {
	for i, b := range batch {
		s := Answered(p, b.Env, b.H, a[i])
		if each != nil {
			each(i, s)
		}
	}
}
