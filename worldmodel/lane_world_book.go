package worldmodel

import (
	"math/bits"

	"github.com/rivus/collab/internal/lanestep"
	"github.com/rivus/collab/policy"
)

// laneBook is a lane world as internal/lanestep reads and changes it: the
// runtime's step runs over the world's compact bookkeeping, and the world
// checks, as the step goes, what only a world can (a start after Close or
// unowed or out of turn, Wake's single answer), and keeps its ghosts.
type laneBook struct {
	m *laneModel
	w *LaneWorld
}

var _ lanestep.Runtime[int] = laneBook{}

func (b laneBook) State(k int) policy.StateID       { return b.w.lanes[k].state }
func (b laneBook) SetState(k int, s policy.StateID) { b.w.lanes[k].state = s }
func (b laneBook) Queued(k int) bool                { return b.w.lanes[k].queued }
func (b laneBook) QueueLen() int                    { return int(b.w.qlen) }
func (b laneBook) Head() int                        { return int(b.w.queue[0]) }
func (b laneBook) Enqueue(k int)                    { b.w.enqueue(k) }
func (b laneBook) Dequeue(k int, _ policy.Outputs)  { b.w.unqueue(k) }
func (b laneBook) Reserved(k int) bool              { return b.w.lanes[k].reserved }
func (b laneBook) SetReserved(k int, held bool)     { b.w.lanes[k].reserved = held }
func (b laneBook) HoldsSlot(k int) bool             { return b.w.lanes[k].slots > 0 }
func (b laneBook) ReleaseSlot(k int)                { b.w.lanes[k].slots-- }
func (b laneBook) Forget(k int)                     { b.w.lanes[k].entry = false }

func (b laneBook) Places() int {
	n := 0
	for k := range b.m.keys {
		if b.w.lanes[k].reserved {
			n++
		}
	}
	return n
}

func (b laneBook) SlotsInUse() int {
	n := 0
	for k := range b.m.keys {
		n += int(b.w.lanes[k].slots)
	}
	return n
}

func (b laneBook) Interrupt(k int, _ policy.TriggerID) {
	l := &b.w.lanes[k]
	l.interrupted = l.acts > 0
}

// ReportInterrupted notes a report of the step the world is checking;
// the grants after it may report none.
func (b laneBook) ReportInterrupted(k int, t policy.TriggerID) {
	if t == laneTrigGranted {
		b.w.fail(laneBadSpuriousReport, k, uint8(t))
		return
	}
	b.w.reported = true
}

// Fired checks that a Wake step gives exactly one answer, and keeps the
// ghost of owed wakes: a Wake that is accepted owes an activation.
func (b laneBook) Fired(k int, t policy.TriggerID, r policy.Result) bool {
	if t != laneTrigWake {
		return true
	}
	if bits.OnesCount64(uint64(r.Outputs&laneAnswers)) != 1 {
		b.w.fail(laneBadNoAnswer, k, 0)
		return false
	}
	if r.Outputs&laneAccepted != 0 {
		b.w.lanes[k].owed = true
		b.m.syncWait(b.w, k)
	}
	return true
}

// Start starts an activation of k, after checking that one may start: not
// after Close, only for an owed wake, and only for the lane that has
// waited longest.
func (b laneBook) Start(k int, t policy.TriggerID) {
	w, l := b.w, &b.w.lanes[k]
	switch pos := w.waitPos(k); {
	case w.closed:
		w.fail(laneBadStartClosed, k, 0)
	case !l.owed:
		w.fail(laneBadStartUnowed, k, 0)
	case pos > 0:
		w.fail(laneBadStartUnfair, k, w.waits[0])
	}
	l.acts++
	l.slots++
	l.timer, l.interrupted, l.owed = true, false, false
	b.m.syncWait(w, k)
	if t == laneTrigWake {
		w.started = true
	}
}

// laneFaults names the world's reason for each fault of the runtime's
// step.
var laneFaults = [...]laneBad{
	lanestep.Refused:         laneBadVerdict,
	lanestep.DequeueUnqueued: laneBadDequeue,
	lanestep.UnreserveNone:   laneBadUnreserve,
	lanestep.ReleaseNone:     laneBadRelease,
	lanestep.ReserveHeld:     laneBadReserve,
	lanestep.EnqueueQueued:   laneBadEnqueue,
	lanestep.StartRunning:    laneBadTwoActivations,
	lanestep.StrayAnswer:     laneBadStrayAnswer,
	lanestep.GrantKept:       laneBadGrantKept,
}

func (b laneBook) Fault(k int, f lanestep.Fault, t policy.TriggerID) {
	bad := laneBadVerdict
	if int(f) < len(laneFaults) {
		bad = laneFaults[f]
	}
	arg := uint8(0)
	switch bad {
	case laneBadVerdict, laneBadStrayAnswer:
		arg = uint8(t)
	}
	b.w.fail(bad, k, arg)
	if bad == laneBadVerdict {
		b.w.badState = b.w.lanes[k].state
	}
}
