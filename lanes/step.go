package lanes

import (
	"fmt"

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
// carries out the outputs, and then grants free slots to the queue.
func (l *Lanes[K]) stepLocked(ln *lane[K], trigger policy.TriggerID, fx *effects[K]) (policy.Result, policy.Outputs) {
	res := l.pol.Step(ln.state, trigger, l.factsLocked())
	if res.Verdict == policy.Rejected && trigger != policy.LaneWake {
		// Only Wake may be refused (after Close); any other rejection is a
		// policy that does not fit this runtime.
		panic(fmt.Sprintf("lanes: lane policy %s rejected %s in state %s", l.pol.Name(),
			l.pol.Table().Triggers[trigger].Name, l.pol.Table().States[ln.state].Name))
	}
	ln.state = res.Next
	l.applyLocked(ln, trigger, res.Outputs, fx)
	if !l.granting {
		// After every step, free slots go to the queue's head; the
		// grants' own steps do not start another round.
		l.granting = true
		l.grantSlotsLocked(fx)
		l.granting = false
	}
	return res, res.Outputs
}

// factsLocked computes the facts every lane step sees.
func (l *Lanes[K]) factsLocked() policy.Facts {
	var f policy.Facts
	if l.queue.len() == 0 {
		f |= policy.LaneFactQueueEmpty
		if l.running < l.cfg.MaxConcurrent {
			f |= policy.LaneFactSlotFree
		}
	}
	switch {
	case l.cfg.MaxQueued == 0: // unbounded
		f |= policy.LaneFactQueueRoom
	case l.cfg.MaxQueued > 0 && l.queue.len()+l.reserved < l.cfg.MaxQueued:
		f |= policy.LaneFactQueueRoom
	}
	return f
}

// applyLocked carries out a step's outputs in the family's order. An
// output the runtime cannot carry out is a policy that does not fit it,
// and panics rather than corrupt the counts.
func (l *Lanes[K]) applyLocked(ln *lane[K], trigger policy.TriggerID, out policy.Outputs, fx *effects[K]) {
	key := ln.key
	fault := func(what string) {
		panic(fmt.Sprintf("lanes: lane policy %s asked to %s in state %s", l.pol.Name(), what, l.pol.Table().States[ln.state].Name))
	}
	if out.Has(policy.LaneOutputDequeue) {
		if !ln.queued {
			fault("dequeue a lane that does not wait")
		}
		l.queue.remove(ln)
		l.cfg.Hooks.queueDepth(l.queue.len())
		if out.Has(policy.LaneOutputStart) && l.cfg.Hooks.Waited != nil {
			l.cfg.Hooks.waited(key, l.hookTime()-ln.queuedAt)
		}
	}
	if out.Has(policy.LaneOutputUnreserve) {
		if l.reserved == 0 {
			fault("give back a queue place nobody holds")
		}
		l.reserved--
	}
	if out.Has(policy.LaneOutputInterrupt) && trigger == policy.LaneTimeout {
		l.cfg.Hooks.timedOut(key)
	}
	if out.Has(policy.LaneOutputInterrupt) && ln.run != nil {
		ln.run.cancel(l.interruptCause(trigger))
	}
	if out.Has(policy.LaneOutputReleaseSlot) {
		if ln.run == nil {
			fault("release a slot the lane does not hold")
		}
		l.running--
		ln.run = nil
	}
	if out.Has(policy.LaneOutputReserve) {
		l.reserved++
	}
	if out.Has(policy.LaneOutputEnqueue) {
		if ln.queued {
			fault("enqueue a lane that already waits")
		}
		l.queue.push(ln)
		ln.queuedAt = l.hookTime()
		l.cfg.Hooks.queueDepth(l.queue.len())
	}
	if out.Has(policy.LaneOutputStart) {
		if ln.run != nil {
			fault("start a second activation of one key")
		}
		l.startLocked(ln, fx)
	}
	if out.Has(policy.LaneOutputForget) {
		delete(l.lanes, key)
	}
	if out.Has(policy.LaneOutputReportInterrupted) {
		fx.dropped = append(fx.dropped, droppedWake[K]{key, l.interruptCause(trigger)})
	}
}

// interruptCause names why trigger interrupts an activation.
func (l *Lanes[K]) interruptCause(trigger policy.TriggerID) error {
	switch trigger {
	case policy.LaneTimeout:
		return ErrTurnTimeout
	case policy.LaneClose:
		return ErrClosed
	}
	return ErrCancelled
}

// grantSlotsLocked hands free slots to the lanes that waited longest.
func (l *Lanes[K]) grantSlotsLocked(fx *effects[K]) {
	for l.queue.len() > 0 && l.running < l.cfg.MaxConcurrent {
		head := l.queue.front()
		l.stepLocked(head, policy.LaneSlotGranted, fx)
		if head.queued {
			panic(fmt.Sprintf("lanes: lane policy %s left the queue's head waiting after SlotGranted", l.pol.Name()))
		}
	}
}
