package lanes

import (
	"fmt"

	"github.com/rivus/collab/internal/lanestep"
	"github.com/rivus/collab/policy"
)

// effects collects what a step asks for that must happen after Lanes.mu
// is released: activations to run, OnExit calls for owed activations
// dropped before they started, and what the metrics hear of the steps.
type effects[K comparable] struct {
	stepEffects[K]
	// depth and running are what the steps added to the depth and to the
	// activations running, for Metrics. Sums of changes, unlike the
	// values, can be reported without the lock in any order.
	depth, running int
}

// stepEffects is what the steps themselves ask for: Lanes.pending
// collects it under the lock, and stepLocked hands it to its caller.
type stepEffects[K comparable] struct {
	starts  startList[K]
	dropped []droppedWake[K]
	// uncounted is how many of the starts Lanes.activations does not
	// count yet (Lanes.unlock counts them).
	uncounted int
}

// startList holds the lanes whose activation has its slot and waits for
// a goroutine, in the order they started, linked through the lanes, so
// that a step allocates nothing for them.
type startList[K comparable] struct {
	head, tail *lane[K]
}

func (s *startList[K]) push(ln *lane[K]) {
	ln.nextStart = nil
	if s.tail != nil {
		s.tail.nextStart = ln
	} else {
		s.head = ln
	}
	s.tail = ln
}

// pop takes the first lane, or returns nil.
func (s *startList[K]) pop() *lane[K] {
	ln := s.head
	if ln != nil {
		s.head, ln.nextStart = ln.nextStart, nil
		if s.head == nil {
			s.tail = nil
		}
	}
	return ln
}

// append moves the lanes of from to the end of s.
func (s *startList[K]) append(from *startList[K]) {
	if from.head == nil {
		return
	}
	if s.tail != nil {
		s.tail.nextStart = from.head
	} else {
		s.head = from.head
	}
	s.tail = from.tail
	*from = startList[K]{}
}

type droppedWake[K comparable] struct {
	key   K
	cause error
}

// run carries out the collected effects, with Lanes.mu not held: the
// metrics first, so that they have heard of a start before the activation
// runs, then each start in a goroutine of its own.
func (fx *effects[K]) run(l *Lanes[K]) {
	if fx.starts.head != nil || len(fx.dropped) > 0 || l.cfg.Metrics != nil {
		fx.runAll(l)
	}
}

// runAll is run where there is something to do.
func (fx *effects[K]) runAll(l *Lanes[K]) {
	fx.count(l.cfg.Metrics)
	for ln := fx.starts.pop(); ln != nil; ln = fx.starts.pop() {
		go l.runActivations(ln)
	}
	if len(fx.dropped) > 0 {
		fx.report(l)
	}
}

// report tells OnExit of the dropped wakes, one at a time. If OnExit
// ends the calling goroutine (runtime.Goexit), the wakes left are
// reported on a goroutine of their own, which Close waits for as for an
// activation.
func (fx *effects[K]) report(l *Lanes[K]) {
	defer func() {
		if rest := fx.dropped; len(rest) > 0 {
			fx.dropped = nil
			l.activations.Add(1)
			go func() {
				defer l.activations.Done()
				(&effects[K]{stepEffects: stepEffects[K]{dropped: rest}}).report(l)
			}()
		}
	}()
	for len(fx.dropped) > 0 {
		d := fx.dropped[0]
		fx.dropped = fx.dropped[1:]
		if l.cfg.Metrics != nil {
			l.cfg.Metrics.Dropped()
		}
		l.onExit(d.key, Interrupted{Started: false, Cause: d.cause})
	}
}

// stepLocked fires trigger at key's lane with the facts of this moment,
// carries out the outputs (internal/lanestep, the code the lane world of
// package worldmodel checks), and then grants free slots to the queue.
func (l *Lanes[K]) stepLocked(ln *lane[K], trigger policy.TriggerID, fx *effects[K]) (policy.Result, policy.Outputs) {
	depth, running, pooled := l.depthLocked(), l.running, len(l.free)
	b := bookkeeping[K]{l}
	res, _ := lanestep.Step[*lane[K]](l.pol, l.lim, b, ln, trigger)
	if monitoring {
		l.interruptedLocked(ln, res)
	}
	// Grant steps only while a lane waits and a slot is free: asked first,
	// that spares the call where it would do nothing, as after most steps.
	if l.queue.len() > 0 && l.running < l.lim.MaxConcurrent {
		lanestep.Grant[*lane[K]](l.pol, l.lim, b)
	}
	if l.pendingSet {
		fx.take(&l.pending)
		l.pendingSet = false
	}
	// Only now: the step reports a dropped wake, with its lane's key,
	// after it forgets the lane.
	if len(l.free) > pooled {
		l.clearPooledLocked(pooled)
	}
	if l.watchDepth {
		if d := l.depthLocked() - depth; d != 0 {
			l.cfg.Hooks.queueDepth(depth + d)
			fx.depth += d
		}
	}
	fx.running += l.running - running
	return res, res.Outputs
}

// depthLocked is the queue places in use: the lanes waiting for a slot
// and the follow-ups owed by running lanes, as MaxQueued counts them.
func (l *Lanes[K]) depthLocked() int { return l.queue.len() + l.reserved }

// clearPooledLocked clears the keys of the lanes that went to the reuse
// list since it held from lanes, so that the list keeps no key reachable.
func (l *Lanes[K]) clearPooledLocked(from int) {
	var zero K
	for _, ln := range l.free[from:] {
		ln.key = zero
	}
}

// take moves the step effects of from into fx, leaving from empty. from's
// slice of dropped wakes is kept for the next step, cleared, so that it
// keeps no key reachable.
func (fx *effects[K]) take(from *stepEffects[K]) {
	fx.starts.append(&from.starts)
	fx.uncounted += from.uncounted
	from.uncounted = 0
	if len(from.dropped) > 0 {
		fx.dropped = append(fx.dropped, from.dropped...)
		clear(from.dropped)
	}
	from.dropped = from.dropped[:0]
}

// count tells m what the steps added to the depth and to the activations
// running, and forgets it.
func (fx *effects[K]) count(m Metrics) {
	if m == nil {
		return
	}
	if fx.depth != 0 {
		m.AddDepth(fx.depth)
	}
	if fx.running != 0 {
		m.AddRunning(fx.running)
	}
	fx.depth, fx.running = 0, 0
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
func (b bookkeeping[K]) HoldsSlot(ln *lane[K]) bool             { return ln.run.held() }
func (b bookkeeping[K]) SlotsInUse() int                        { return b.l.running }

// Forget deletes ln's entry, and keeps ln for reuse if nothing of it is
// left: a policy that forgets a lane still running or waiting leaves that
// lane to its activation or the queue. The step clears the key of a lane
// kept for reuse once it is over (stepLocked).
func (b bookkeeping[K]) Forget(ln *lane[K]) {
	delete(b.l.lanes, ln.key)
	ln.mapped = false
	if b.l.recent == ln {
		b.l.recent = nil
	}
	if !ln.queued && !ln.reserved && !ln.run.held() && len(b.l.free) < maxFreeLanes {
		b.l.free = append(b.l.free, ln)
	}
}

func (b bookkeeping[K]) Fired(ln *lane[K], t policy.TriggerID, r policy.Result) bool {
	if monitoring {
		b.l.mon.noteLocked(ln.key, t, r)
	}
	return true
}

func (b bookkeeping[K]) Enqueue(ln *lane[K]) {
	b.l.queue.push(ln)
	if b.l.timed {
		ln.extra().queuedAt = b.l.hookTime()
	}
}

func (b bookkeeping[K]) Dequeue(ln *lane[K], out policy.Outputs) {
	b.l.queue.remove(ln)
	if b.l.timed && out&policy.LaneOutputStart != 0 {
		// The start that follows in this step reads it (Enqueue made
		// the extra).
		e := ln.ext
		e.waited = b.l.hookTime() - e.queuedAt
		b.l.cfg.Hooks.waited(ln.key, e.waited)
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

func (b bookkeeping[K]) Start(ln *lane[K], _ policy.TriggerID) { b.l.startLocked(ln) }

func (b bookkeeping[K]) ReleaseSlot(ln *lane[K]) {
	b.l.running--
	if b.l.cfg.Metrics != nil {
		b.l.runs.remove(ln)
	}
	ln.run.ctx = nil // the seq kept
	ln.returned, ln.left = false, false
	if e := ln.ext; e != nil {
		// A start without a wait in the queue waited 0.
		e.ended, e.began, e.waited = nil, 0, 0
	}
}

func (b bookkeeping[K]) Interrupt(ln *lane[K], t policy.TriggerID) {
	if t == policy.LaneTimeout {
		b.l.cfg.Hooks.timedOut(ln.key)
	}
	if ln.run.held() {
		ln.run.ctx.cancel(interruptCause(t))
	}
}

func (b bookkeeping[K]) ReportInterrupted(ln *lane[K], t policy.TriggerID) {
	b.l.pending.dropped = append(b.l.pending.dropped, droppedWake[K]{ln.key, interruptCause(t)})
	b.l.pendingSet = true
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
