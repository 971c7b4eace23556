package lanes

import (
	"fmt"

	"github.com/rivus/collab/internal/lanestep"
	"github.com/rivus/collab/policy"
)

// effects collects what a step asks for that must happen after Lanes.mu
// is released: activations to run, and OnExit calls for owed activations
// dropped before they started.
type effects[K comparable] struct {
	starts  []start[K]
	dropped []droppedWake[K]
}

// start is an activation that has its slot and waits for a goroutine.
type start[K comparable] struct {
	ln  *lane[K]
	run *activation
}

type droppedWake[K comparable] struct {
	key   K
	cause error
}

// run carries out the collected effects, with Lanes.mu not held: each
// start in a goroutine of its own.
func (fx *effects[K]) run(l *Lanes[K]) {
	for _, s := range fx.starts {
		go l.runActivations(s.ln, s.run)
	}
	fx.starts = nil
	fx.report(l)
}

// report tells OnExit of the dropped wakes.
func (fx *effects[K]) report(l *Lanes[K]) {
	for _, d := range fx.dropped {
		l.onExit(d.key, Interrupted{Started: false, Cause: d.cause})
	}
	fx.dropped = nil
}

// stepLocked fires trigger at key's lane with the facts of this moment,
// carries out the outputs (internal/lanestep, the code the lane world of
// package worldmodel checks), and then grants free slots to the queue.
func (l *Lanes[K]) stepLocked(ln *lane[K], trigger policy.TriggerID, fx *effects[K]) (policy.Result, policy.Outputs) {
	b := bookkeeping[K]{l}
	lim := lanestep.Limits{MaxConcurrent: l.cfg.MaxConcurrent, MaxQueued: l.cfg.MaxQueued}
	res, _ := lanestep.Step[*lane[K]](l.pol, lim, b, ln, trigger)
	lanestep.Grant[*lane[K]](l.pol, lim, b)
	fx.take(&l.pending)
	return res, res.Outputs
}

// take moves the effects of from into fx, leaving from empty.
func (fx *effects[K]) take(from *effects[K]) {
	if len(from.starts) > 0 {
		fx.starts = append(fx.starts, from.starts...)
	}
	if len(from.dropped) > 0 {
		fx.dropped = append(fx.dropped, from.dropped...)
	}
	from.starts, from.dropped = from.starts[:0], from.dropped[:0]
}

// bookkeeping is the lanes' state as lanestep reads and changes it, with
// l.mu held; the effects that need the lock released go to l.pending,
// which stepLocked hands to its caller. (A pointer to the caller's effects
// here would move them to the heap on every step: lanestep's generic code
// cannot prove it does not keep them.)
type bookkeeping[K comparable] struct {
	l *Lanes[K]
}

func (b bookkeeping[K]) State(ln *lane[K]) policy.StateID       { return ln.state }
func (b bookkeeping[K]) SetState(ln *lane[K], s policy.StateID) { ln.state = s }
func (b bookkeeping[K]) Queued(ln *lane[K]) bool                { return ln.queued }
func (b bookkeeping[K]) QueueLen() int                          { return b.l.queue.len() }
func (b bookkeeping[K]) Head() *lane[K]                         { return b.l.queue.front() }
func (b bookkeeping[K]) Reserved(ln *lane[K]) bool              { return ln.reserved }
func (b bookkeeping[K]) Places() int                            { return b.l.reserved }
func (b bookkeeping[K]) HoldsSlot(ln *lane[K]) bool             { return ln.run != nil }
func (b bookkeeping[K]) SlotsInUse() int                        { return b.l.running }
func (b bookkeeping[K]) Forget(ln *lane[K])                     { delete(b.l.lanes, ln.key) }

func (b bookkeeping[K]) Fired(ln *lane[K], t policy.TriggerID, r policy.Result) bool {
	if monitoring {
		b.l.mon.noteLocked(ln.key, t, r)
	}
	return true
}

func (b bookkeeping[K]) Enqueue(ln *lane[K]) {
	b.l.queue.push(ln)
	ln.queuedAt = b.l.hookTime()
	b.l.cfg.Hooks.queueDepth(b.l.queue.len())
}

func (b bookkeeping[K]) Dequeue(ln *lane[K], out policy.Outputs) {
	b.l.queue.remove(ln)
	b.l.cfg.Hooks.queueDepth(b.l.queue.len())
	if out.Has(policy.LaneOutputStart) && b.l.cfg.Hooks.Waited != nil {
		b.l.cfg.Hooks.waited(ln.key, b.l.hookTime()-ln.queuedAt)
	}
}

func (b bookkeeping[K]) SetReserved(ln *lane[K], held bool) {
	ln.reserved = held
	if held {
		b.l.reserved++
	} else {
		b.l.reserved--
	}
}

func (b bookkeeping[K]) Start(ln *lane[K], _ policy.TriggerID) { b.l.startLocked(ln, &b.l.pending) }

func (b bookkeeping[K]) ReleaseSlot(ln *lane[K]) {
	b.l.running--
	ln.run = nil
}

func (b bookkeeping[K]) Interrupt(ln *lane[K], t policy.TriggerID) {
	if t == policy.LaneTimeout {
		b.l.cfg.Hooks.timedOut(ln.key)
	}
	if ln.run != nil {
		ln.run.cancel(interruptCause(t))
	}
}

func (b bookkeeping[K]) ReportInterrupted(ln *lane[K], t policy.TriggerID) {
	b.l.pending.dropped = append(b.l.pending.dropped, droppedWake[K]{ln.key, interruptCause(t)})
}

// Fault panics: the lane policy does not fit this runtime, and going on
// would corrupt the counts.
func (b bookkeeping[K]) Fault(ln *lane[K], f lanestep.Fault, t policy.TriggerID) {
	pol := b.l.pol
	panic(fmt.Sprintf("lanes: lane policy %s asked to %s (%s in state %s)", pol.Name(), f,
		pol.Table().Triggers[t].Name, pol.Table().States[ln.state].Name))
}

// interruptCause names why trigger interrupts an activation.
func interruptCause(trigger policy.TriggerID) error {
	switch trigger {
	case policy.LaneTimeout:
		return ErrTurnTimeout
	case policy.LaneClose:
		return ErrClosed
	}
	return ErrCancelled
}
