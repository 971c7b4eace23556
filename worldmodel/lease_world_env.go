package worldmodel

import (
	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/policy"
)

// leaseEnv is the lease world as the runtime's step sees holder i: its
// effects become flags of the world, its instants moments, and its
// faults the world's.
type leaseEnv struct {
	m *leaseModel
	w *leaseVars
	i int
	// saved says the step handles the success of a claim or a renewal:
	// a deadline armed from that write's start starts in time.
	saved bool
}

var _ leasestep.Env[uint8] = leaseEnv{}

func (e leaseEnv) h() *leaseHolder { return &e.w.h[e.i] }

func (e leaseEnv) Now() uint8 { return leaseMomentNow }

func (e leaseEnv) Sighting() (store.Revision, bool) {
	n := e.h().note
	return store.Revision(n), n != leaseRevNone
}

func (e leaseEnv) Sight(rev store.Revision) {
	h := e.h()
	h.note = uint8(rev)
	h.flags &^= leaseNoteTTL
}

func (e leaseEnv) Unsight() {
	h := e.h()
	h.note = leaseRevNone
	h.flags &^= leaseNoteTTL
}

func (e leaseEnv) Silent() bool { return e.h().flags&leaseNoteTTL != 0 }

func (e leaseEnv) StopTimers() { e.h().flags &^= leaseTimerBits }

// ArmDeadline arms the deadline: from the start of the write whose
// success the step handles, it starts in time; from now, after that
// write was visible to others (late); from any other moment, at an
// unknown earlier one, which the world cannot time (it lags).
func (e leaseEnv) ArmDeadline(from uint8) {
	h := e.h()
	h.flags = h.flags&^(leaseDue|leaseLag|leaseLate) | leaseArmed
	switch {
	case from == leaseMomentNow:
		h.flags |= leaseLate
	case !e.saved || from != leaseMomentPast:
		h.flags |= leaseLag
	}
}

func (e leaseEnv) ScheduleRenew() { e.h().flags |= leaseRenew }
func (e leaseEnv) ScheduleRetry() { e.h().flags |= leaseRenew }
func (e leaseEnv) DeclareLost()   { e.h().flags &^= leaseTimerBits }

// AnswerFence answers the RunFenced call that holds the fence.
func (e leaseEnv) AnswerFence(run bool) {
	if run {
		e.m.startWork(e.w, e.i)
		return
	}
	e.h().fcall = leaseFenceIdle
	e.m.recOf(e.w, e.i).fence = 0
}

func (e leaseEnv) Acquired()  {}
func (e leaseEnv) HeldError() {}
func (e leaseEnv) RepoError() {}

// EndHandle ends the handle: Close has returned.
func (e leaseEnv) EndHandle() {
	h := e.h()
	h.flags &^= leaseTimerBits
	h.hs.Closing = false
}

// Fault records what the policy asked that the runtime cannot do.
func (e leaseEnv) Fault(f leasestep.Fault, t policy.TriggerID, o policy.Outputs) {
	switch f {
	case leasestep.Rejected:
		e.w.setFault(leaseFaultRejected, e.i, uint8(t))
	case leasestep.BadState:
		e.w.setFault(leaseFaultOutputs, e.i, leaseArgBadState)
	case leasestep.NoAnswer:
		e.w.setFault(leaseFaultOutputs, e.i, leaseArgNoAnswer)
	case leasestep.CallLeft:
		e.w.setFault(leaseFaultOutputs, e.i, leaseArgCallLeft)
	default:
		e.w.setFault(leaseFaultOutputs, e.i, leaseOutputBit(o))
	}
}
