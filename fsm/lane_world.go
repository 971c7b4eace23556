package fsm

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// The lanes runtime as the lane world defines it; package lanes must
// implement exactly these semantics, which LaneModel checks any lane
// policy against.
//
// The runtime keeps, under one lock: a map from key to lane entry (the
// lane's policy.StateID and its bookkeeping: a running activation, a queue
// position, a reserved queue place, a slot), the slots in use, the queue of
// waiting lanes in arrival order, and the closed flag. It acts on a lane
// only by firing a trigger at it through Policy.Step, with facts computed
// at that moment, and then carrying out the outputs in the family's order;
// it never looks at state names.
//
// Facts: slotFree is "slots in use < MaxConcurrent and the queue is empty";
// queueRoom is "queued lanes + reserved places < MaxQueued" (always, when
// MaxQueued is 0); queueEmpty is "the queue is empty".
//
// Outputs, for the lane the step was fired at:
//   - dequeue removes it from the queue; the others keep their order;
//   - unreserve and reserve give back and take its one reserved place;
//   - interrupt cancels its running activation's context (no-op if none runs);
//   - releaseSlot gives back a slot it holds;
//   - enqueue appends it to the queue;
//   - start takes a slot (even when none is free: the policy decides),
//     starts an activation with a fresh context, and arms its turn timeout;
//   - forget deletes its map entry;
//   - reportInterrupted calls OnExit with Interrupted;
//   - started, queued, coalesced and queueFull are Wake's answer.
//
// An output the runtime cannot carry out is a policy bug, which the
// runtime reports by panicking and the model as laneInvRuntime: dequeue of
// a lane not in the queue, enqueue of a queued lane, reserve while holding
// a place, unreserve or releaseSlot while holding none, a Wake answer
// outside Wake, a Wake without exactly one answer, a SlotGranted that
// leaves the lane in the queue (the runtime would grant forever), and a
// rejection of any trigger but Wake. A rejected Wake returns ErrClosed,
// which is a true answer only after Close (laneInvAnswer). An ignored
// trigger changes nothing; an ignored Wake gives no answer, a policy bug.
//
// Moves, each atomic under the lock:
//   - Wake(k): the lane is k's entry or, without one, a new entry in the
//     policy's initial state, which gets Close first if the lanes are
//     closed; then Wake is fired at it.
//   - Cancel(k): fires Cancel at k's entry. A key without an entry runs and
//     owes nothing (laneInvEntries), so Cancel returns at once. Cancel then
//     waits outside the lock for the activation to end; the model needs
//     no such wait.
//   - Close: sets the closed flag and fires Close at every entry in map
//     order, which is unspecified, so the model tries every order.
//   - k's activation returns and its OnExit has run: the runtime drops
//     the activation, its context and its timer, then fires ActivationEnded.
//   - the turn timeout of k's activation passes (once per activation, and
//     never after it ended): the runtime fires Timeout.
//   - callers stop calling (a move of the model only): from then on
//     activations only end and timers only fire, so a world where nothing
//     can move any more must owe nothing (Model.Owes).
//
// After every step the runtime fires SlotGranted at the head of the queue
// while a slot is free and a lane waits.
//
// The properties (the laneInv constants) are checked on that bookkeeping,
// with two ghosts: per lane, whether a successful wake is owed (set by a
// wake answered started, queued or coalesced; cleared by a start, which
// serves it, and by Cancel and Close, which drop it), and the order in
// which the lanes that owe a wake and run nothing began to wait. Checks of
// a single step (what start, Wake's answer, reportInterrupted and interrupt
// must agree with) are made while the move is carried out and recorded in
// the world, which then breaks the invariant named for them.

// LaneMaxKeys is the most keys LaneBounds may ask for: a LaneWorld's
// arrays have this length.
const LaneMaxKeys = 6

// LaneBounds bound the lanes runtime that LaneModel explores.
type LaneBounds struct {
	// Keys is the number of keys whose lanes the callers wake, 1 to
	// LaneMaxKeys.
	Keys int
	// MaxConcurrent is the number of slots: activations that may run at
	// once across all keys, 1 to 255.
	MaxConcurrent int
	// MaxQueued bounds the lanes waiting in the queue plus the queue places
	// reserved for owed follow-ups, 1 to 255, or 0 for no bound.
	MaxQueued int
}

// DefaultLaneBounds returns the bounds the tests check the shipped policy
// at: 3 keys, 2 slots, MaxQueued 2, which reaches a full queue with places
// reserved by running lanes.
func DefaultLaneBounds() LaneBounds {
	return LaneBounds{Keys: 3, MaxConcurrent: 2, MaxQueued: 2}
}

// LaneWorld is one state of a lanes runtime with up to LaneMaxKeys keys: each
// lane's policy state and runtime bookkeeping, the queue, the closed flag,
// ghost variables for the invariants, and, in a world that breaks one, what
// the move that led to it did wrong. It is a comparable value without
// pointers; the model's Format renders it.
type LaneWorld struct {
	lanes [LaneMaxKeys]laneVars
	queue [LaneMaxKeys]uint8 // the queue: keys in arrival order, qlen of them
	qlen  uint8
	// waits is a ghost: the keys that owe a wake and run nothing, in the
	// order their wait began (a wake finding them idle, or their activation
	// ending while they owe one); wlen of them.
	waits  [LaneMaxKeys]uint8
	wlen   uint8
	closed bool // Close was called
	quiet  bool // callers stopped calling
	// bad, badKey and badArg record the first thing a move did wrong
	// (laneOK if nothing); badState is the lane's state when the policy
	// refused a trigger.
	bad      laneBad
	badKey   uint8
	badArg   uint8
	badState policy.StateID
}

// laneVars is one key's lane: what the runtime keeps for it, and a ghost.
type laneVars struct {
	state       policy.StateID // the policy's state; the initial one while there is no entry
	entry       bool           // the runtime's map holds the lane (forget deletes it)
	acts        uint8          // activations of the key running
	slots       uint8          // slots the lane holds
	reserved    bool           // the lane holds a queue place for an owed follow-up
	queued      bool           // the lane waits in the queue
	interrupted bool           // the running activation's context is cancelled
	timer       bool           // the running activation's turn timeout is armed
	// owed is a ghost: a successful wake came after the lane's last start,
	// and no Cancel or Close dropped it since.
	owed bool
}

// holds reports whether the lane holds anything of the runtime's.
func (l *laneVars) holds() bool { return l.acts > 0 || l.slots > 0 || l.queued || l.reserved }

// The family's vocabulary as the policy interface numbers it.
const (
	laneTrigWake    = policy.TriggerID(LaneWake)
	laneTrigGranted = policy.TriggerID(LaneSlotGranted)
	laneTrigEnded   = policy.TriggerID(LaneActivationEnded)
	laneTrigTimeout = policy.TriggerID(LaneTimeout)
	laneTrigCancel  = policy.TriggerID(LaneCancel)
	laneTrigClose   = policy.TriggerID(LaneClose)

	laneAnswers  = policy.Outputs(LaneOutputStarted | LaneOutputQueued | LaneOutputCoalesced | LaneOutputQueueFull)
	laneAccepted = policy.Outputs(LaneOutputStarted | LaneOutputQueued | LaneOutputCoalesced)
)

// The properties LaneModel checks, by name, and the label of the move
// after which callers stop calling.
const (
	laneInvRuntime    = "the runtime can carry out every step"
	laneInvClosed     = "nothing starts after close"
	laneInvBidden     = "every activation serves a wake"
	laneInvFair       = "a freed slot goes to the longest-waiting lane"
	laneInvAnswer     = "wake answers truthfully"
	laneInvReport     = "dropped wakes are reported interrupted"
	laneInvInterrupt  = "cancel, close and timeout interrupt the activation"
	laneInvOne        = "at most one activation per key"
	laneInvConcurrent = "at most MaxConcurrent running"
	laneInvQueued     = "at most MaxQueued waiting"
	laneInvSlots      = "a slot is held exactly while its activation runs"
	laneInvServed     = "every successful wake is served"
	laneInvPlaces     = "queue places belong to owed wakes"
	laneInvEntries    = "a lane has an entry exactly while it holds something"
	laneQuietLabel    = "callers stop"
)

// laneBad says what a move did wrong, for the event invariants.
type laneBad uint8

const (
	laneOK                laneBad = iota
	laneBadVerdict                // the policy refused a trigger the runtime fires (badArg: trigger)
	laneBadNoAnswer               // Wake gave no answer or several
	laneBadStrayAnswer            // an answer output outside Wake (badArg: trigger)
	laneBadDequeue                // dequeue of a lane not in the queue
	laneBadEnqueue                // enqueue of a lane already in the queue
	laneBadReserve                // reserve while holding a place
	laneBadUnreserve              // unreserve while holding none
	laneBadRelease                // releaseSlot while holding no slot
	laneBadGrantKept              // SlotGranted left the lane in the queue
	laneBadStartClosed            // start after Close
	laneBadStartUnowed            // start with no wake owed
	laneBadStartUnfair            // start while another lane waited longer (badArg: that key)
	laneBadErrClosed              // Wake rejected (ErrClosed) before Close
	laneBadStartedLie             // Wake answered started without starting
	laneBadOwedLie                // Wake answered queued or coalesced yet started
	laneBadQueuedLie              // Wake answered queued though a wake was owed already
	laneBadCoalescedLie           // Wake answered coalesced though nothing was owed
	laneBadFullLie                // Wake answered queueFull though the queue had room
	laneBadFullOwedLie            // Wake answered queueFull though the lane owed an activation already
	laneBadUnreported             // an owed wake was dropped without reportInterrupted (badArg: trigger)
	laneBadSpuriousReport         // reportInterrupted though no owed wake was dropped (badArg: trigger)
	laneBadUninterrupted          // the activation runs on uninterrupted after the trigger (badArg: trigger)
	laneBadCount
)

// laneBadInfo names each laneBad's invariant and says what went wrong:
// %[1]s is the key, %[2]s the trigger, %[3]s the state, %[4]s the other key.
var laneBadInfo = [laneBadCount]struct{ inv, text string }{
	laneBadVerdict:        {laneInvRuntime, "the policy refused %[2]s at %[1]s in state %[3]s, where the runtime fires it"},
	laneBadNoAnswer:       {laneInvRuntime, "Wake at %[1]s gave no single answer (started, queued, coalesced or queueFull)"},
	laneBadStrayAnswer:    {laneInvRuntime, "%[2]s at %[1]s output a Wake answer, and no Wake waits for one"},
	laneBadDequeue:        {laneInvRuntime, "dequeue at %[1]s, which is not in the queue"},
	laneBadEnqueue:        {laneInvRuntime, "enqueue at %[1]s, which is in the queue already"},
	laneBadReserve:        {laneInvRuntime, "reserve at %[1]s, which holds a reserved place already"},
	laneBadUnreserve:      {laneInvRuntime, "unreserve at %[1]s, which holds no reserved place"},
	laneBadRelease:        {laneInvRuntime, "releaseSlot at %[1]s, which holds no slot"},
	laneBadGrantKept:      {laneInvRuntime, "SlotGranted left %[1]s in the queue, so the runtime would grant it forever"},
	laneBadStartClosed:    {laneInvClosed, "%[1]s started an activation after Close"},
	laneBadStartUnowed:    {laneInvBidden, "%[1]s started an activation though no successful wake was owed"},
	laneBadStartUnfair:    {laneInvFair, "%[1]s started an activation while %[4]s had waited longer"},
	laneBadErrClosed:      {laneInvAnswer, "Wake at %[1]s returned ErrClosed, but the lanes are open"},
	laneBadStartedLie:     {laneInvAnswer, "Wake at %[1]s answered started but started no activation"},
	laneBadOwedLie:        {laneInvAnswer, "Wake at %[1]s answered queued or coalesced but started an activation"},
	laneBadQueuedLie:      {laneInvAnswer, "Wake at %[1]s answered queued though %[1]s owed an activation already (want coalesced)"},
	laneBadCoalescedLie:   {laneInvAnswer, "Wake at %[1]s answered coalesced though %[1]s owed nothing (want queued)"},
	laneBadFullLie:        {laneInvAnswer, "Wake at %[1]s answered queueFull though the queue had room"},
	laneBadFullOwedLie:    {laneInvAnswer, "Wake at %[1]s answered queueFull though %[1]s owed an activation already (want coalesced)"},
	laneBadUnreported:     {laneInvReport, "%[2]s at %[1]s dropped an owed wake without reportInterrupted"},
	laneBadSpuriousReport: {laneInvReport, "%[2]s at %[1]s output reportInterrupted, but dropped no owed wake"},
	laneBadUninterrupted:  {laneInvInterrupt, "after %[2]s at %[1]s its activation runs on uninterrupted"},
}

// fail records the first thing a move did wrong.
func (w *LaneWorld) fail(b laneBad, k int, arg uint8) {
	if w.bad == laneOK && b != laneOK {
		w.bad, w.badKey, w.badArg = b, uint8(k), arg
	}
}

// laneModel holds what LaneModel precomputes, so that Next allocates
// nothing: the bounds, the initial state, and every move's label.
type laneModel struct {
	p           policy.Policy
	table       *policy.Table
	keys        int
	maxConc     int
	maxQueued   int
	initial     policy.StateID
	labels      [LaneMaxKeys]laneLabels
	closeOrders [][LaneMaxKeys]uint8 // every order of the keys
	closeLabels []string
}

// laneLabels are the labels of one key's moves.
type laneLabels struct{ wake, cancel, end, timeout string }

// LaneModel returns the model of a lanes runtime that drives policy p, a
// policy of family lane, within bounds b; the comment at the top of
// lane_world.go states the runtime semantics it fixes. Its Canonical treats
// keys as interchangeable, which renames them between the steps of a
// trace; set it to nil to explore without that reduction.
func LaneModel(p policy.Policy, b LaneBounds) (modelcheck.Model[LaneWorld], error) {
	m, err := newLaneModel(p, b)
	if err != nil {
		return modelcheck.Model[LaneWorld]{}, err
	}
	var init LaneWorld
	for k := range init.lanes {
		init.lanes[k].state = m.initial
	}
	return modelcheck.Model[LaneWorld]{
		Name: fmt.Sprintf("lane world of %s (%d keys, MaxConcurrent %d, MaxQueued %d)",
			p.Name(), b.Keys, b.MaxConcurrent, b.MaxQueued),
		Init:       []LaneWorld{init},
		Next:       m.next,
		Invariants: m.invariants(),
		Owes:       m.owes,
		Canonical:  m.canonical,
		Format:     m.format,
	}, nil
}

func newLaneModel(p policy.Policy, b LaneBounds) (*laneModel, error) {
	switch {
	case p == nil:
		return nil, &ModelError{"lane", "Policy", "nil"}
	case p.Family() != "lane":
		return nil, &ModelError{"lane", "Policy", fmt.Sprintf("%s is of family %q, not lane", p.Name(), p.Family())}
	case b.Keys < 1 || b.Keys > LaneMaxKeys:
		return nil, &ModelError{"lane", "Keys", fmt.Sprintf("%d is not in [1, %d]", b.Keys, LaneMaxKeys)}
	case b.MaxConcurrent < 1 || b.MaxConcurrent > 255:
		return nil, &ModelError{"lane", "MaxConcurrent", fmt.Sprintf("%d is not in [1, 255]", b.MaxConcurrent)}
	case b.MaxQueued < 0 || b.MaxQueued > 255:
		return nil, &ModelError{"lane", "MaxQueued", fmt.Sprintf("%d is not in [0, 255] (0: no bound)", b.MaxQueued)}
	}
	m := &laneModel{p: p, table: p.Table(), keys: b.Keys, maxConc: b.MaxConcurrent,
		maxQueued: b.MaxQueued, initial: p.Initial()}
	for k := range m.keys {
		n := laneKeyName(k)
		m.labels[k] = laneLabels{n + " wake", n + " cancel", n + " activation ends", n + " turn timeout"}
	}
	m.permute([LaneMaxKeys]uint8{}, 0)
	return m, nil
}

// permute adds every order of the keys that starts with order[:n].
func (m *laneModel) permute(order [LaneMaxKeys]uint8, n int) {
	if n == m.keys {
		names := make([]string, n)
		for i := range n {
			names[i] = laneKeyName(int(order[i]))
		}
		m.closeOrders = append(m.closeOrders, order)
		m.closeLabels = append(m.closeLabels, "close ("+strings.Join(names, ", ")+")")
		return
	}
	for k := range m.keys {
		used := false
		for _, o := range order[:n] {
			used = used || int(o) == k
		}
		if !used {
			order[n] = uint8(k)
			m.permute(order, n+1)
		}
	}
}

func laneKeyName(k int) string { return "k" + strconv.Itoa(k) }

// next yields every move of w: per key a wake, a cancel (if the key has an
// entry), its activation ending and its turn timeout (while one runs); then
// Close in every distinct order, and the callers stopping.
func (m *laneModel) next(w LaneWorld, yield func(string, LaneWorld)) {
	if w.bad != laneOK {
		return
	}
	for k := range m.keys {
		l, lb := &w.lanes[k], &m.labels[k]
		if !w.quiet {
			n := w
			m.wake(&n, k)
			yield(lb.wake, m.settle(n))
			if l.entry {
				n = w
				m.drop(&n, k, laneTrigCancel)
				yield(lb.cancel, m.settle(n))
			}
		}
		if l.acts > 0 {
			n := w
			m.end(&n, k)
			yield(lb.end, m.settle(n))
			if l.timer {
				n = w
				m.timeout(&n, k)
				yield(lb.timeout, m.settle(n))
			}
		}
	}
	if w.quiet {
		return
	}
	if !w.closed {
		for i := range m.closeOrders {
			if m.distinctOrder(&w, &m.closeOrders[i]) {
				n := w
				m.close(&n, &m.closeOrders[i])
				yield(m.closeLabels[i], m.settle(n))
			}
		}
	}
	n := w
	n.quiet = true
	yield(laneQuietLabel, n)
}

// distinctOrder reports whether order is the one the model tries among the
// orders that fire Close at w's entries alike: keys without an entry get no
// Close, so they must come last, in increasing order.
func (m *laneModel) distinctOrder(w *LaneWorld, order *[LaneMaxKeys]uint8) bool {
	last := -1
	for _, k := range order[:m.keys] {
		switch {
		case w.lanes[k].entry && last >= 0:
			return false
		case w.lanes[k].entry:
		case int(k) < last:
			return false
		default:
			last = int(k)
		}
	}
	return true
}

// settle ends a move: a lane without an entry that holds nothing is gone
// from the runtime, so its state is the initial one a new entry gets.
func (m *laneModel) settle(w LaneWorld) LaneWorld {
	for k := range m.keys {
		if l := &w.lanes[k]; !l.entry && !l.holds() {
			l.state = m.initial
		}
	}
	return w
}

// facts computes the facts as the runtime does, from the world as it is.
func (m *laneModel) facts(w *LaneWorld) policy.Facts {
	places := int(w.qlen)
	for k := range m.keys {
		if w.lanes[k].reserved {
			places++
		}
	}
	var f policy.Facts
	if w.qlen == 0 {
		f |= policy.Facts(LaneFactQueueEmpty)
		if m.slotFree(w) {
			f |= policy.Facts(LaneFactSlotFree)
		}
	}
	if m.maxQueued == 0 || places < m.maxQueued {
		f |= policy.Facts(LaneFactQueueRoom)
	}
	return f
}

// slotFree reports whether fewer than MaxConcurrent slots are in use.
func (m *laneModel) slotFree(w *LaneWorld) bool {
	used := 0
	for k := range m.keys {
		used += int(w.lanes[k].slots)
	}
	return used < m.maxConc
}

// wake is lanes.Wake(k).
func (m *laneModel) wake(w *LaneWorld, k int) {
	l := &w.lanes[k]
	if !l.entry {
		l.entry, l.state = true, m.initial
		if w.closed && !m.drop(w, k, laneTrigClose) {
			return
		}
	}
	f := m.facts(w)
	r := m.p.Step(l.state, laneTrigWake, f)
	switch {
	case r.Verdict == policy.Rejected:
		if !w.closed {
			w.fail(laneBadErrClosed, k, 0)
		}
		return
	case r.Verdict != policy.Fired || bits.OnesCount64(uint64(r.Outputs&laneAnswers)) != 1:
		w.fail(laneBadNoAnswer, k, 0)
		return
	}
	owed := l.owed
	if r.Outputs&laneAccepted != 0 {
		l.owed = true
		m.syncWait(w, k)
	}
	l.state = r.Next
	started, reported := m.apply(w, k, laneTrigWake, r.Outputs)
	switch {
	case w.bad != laneOK:
	case reported:
		w.fail(laneBadSpuriousReport, k, uint8(laneTrigWake))
	default:
		w.fail(laneWakeLie(r.Outputs, started, owed, f.Has(policy.Facts(LaneFactQueueRoom))), k, 0)
		m.grant(w)
	}
}

// laneWakeLie checks Wake's answer against what the step did, given
// whether the lane owed an activation before and whether the queue had
// room; it returns laneOK for a true answer.
func laneWakeLie(out policy.Outputs, started, owed, room bool) laneBad {
	switch {
	case out.Has(policy.Outputs(LaneOutputStarted)) && !started:
		return laneBadStartedLie
	case out&policy.Outputs(LaneOutputQueued|LaneOutputCoalesced) != 0 && started:
		return laneBadOwedLie
	case out.Has(policy.Outputs(LaneOutputQueued)) && owed:
		return laneBadQueuedLie
	case out.Has(policy.Outputs(LaneOutputCoalesced)) && !owed:
		return laneBadCoalescedLie
	case out.Has(policy.Outputs(LaneOutputQueueFull)) && owed:
		return laneBadFullOwedLie
	case out.Has(policy.Outputs(LaneOutputQueueFull)) && room:
		return laneBadFullLie
	}
	return laneOK
}

// close is lanes.Close, firing Close at the entries in the given order.
func (m *laneModel) close(w *LaneWorld, order *[LaneMaxKeys]uint8) {
	w.closed = true
	for _, k := range order[:m.keys] {
		if w.lanes[k].entry && !m.drop(w, int(k), laneTrigClose) {
			return
		}
	}
}

// drop fires Cancel or Close at k. Both drop what k owes, so the ghost no
// longer owes it, and must report that; both must leave a running
// activation interrupted. It reports whether the move may go on.
func (m *laneModel) drop(w *LaneWorld, k int, t policy.TriggerID) bool {
	l := &w.lanes[k]
	owed := l.owed
	l.owed = false
	m.syncWait(w, k)
	out, ok := m.fire(w, k, t)
	if !ok {
		return false
	}
	_, reported := m.apply(w, k, t, out)
	switch {
	case w.bad != laneOK:
	case owed && !reported:
		w.fail(laneBadUnreported, k, uint8(t))
	case reported && !owed:
		w.fail(laneBadSpuriousReport, k, uint8(t))
	case l.acts > 0 && !l.interrupted:
		w.fail(laneBadUninterrupted, k, uint8(t))
	default:
		m.grant(w)
	}
	return w.bad == laneOK
}

// end is k's activation returning, after its OnExit ran.
func (m *laneModel) end(w *LaneWorld, k int) {
	l := &w.lanes[k]
	l.acts--
	l.timer, l.interrupted = false, false
	m.syncWait(w, k)
	m.internal(w, k, laneTrigEnded)
}

// timeout is the turn timeout of k's running activation passing.
func (m *laneModel) timeout(w *LaneWorld, k int) {
	l := &w.lanes[k]
	l.timer = false
	m.internal(w, k, laneTrigTimeout)
	if l.acts > 0 && !l.interrupted {
		w.fail(laneBadUninterrupted, k, uint8(laneTrigTimeout))
	}
}

// internal fires a trigger that drops nothing, then grants free slots.
func (m *laneModel) internal(w *LaneWorld, k int, t policy.TriggerID) {
	out, ok := m.fire(w, k, t)
	if !ok {
		return
	}
	if _, reported := m.apply(w, k, t, out); reported {
		w.fail(laneBadSpuriousReport, k, uint8(t))
	}
	m.grant(w)
}

// grant fires SlotGranted at the queue's head while a slot is free.
func (m *laneModel) grant(w *LaneWorld) {
	for w.bad == laneOK && w.qlen > 0 && m.slotFree(w) {
		k := int(w.queue[0])
		out, ok := m.fire(w, k, laneTrigGranted)
		if !ok {
			return
		}
		if _, reported := m.apply(w, k, laneTrigGranted, out); reported {
			w.fail(laneBadSpuriousReport, k, uint8(laneTrigGranted))
		}
		if w.lanes[k].queued {
			w.fail(laneBadGrantKept, k, 0)
		}
	}
}

// fire steps k's policy on a trigger other than Wake. The runtime fires
// those only where the lane must handle them, so a refusal is a policy bug.
func (m *laneModel) fire(w *LaneWorld, k int, t policy.TriggerID) (policy.Outputs, bool) {
	l := &w.lanes[k]
	r := m.p.Step(l.state, t, m.facts(w))
	switch r.Verdict {
	case policy.Fired:
		l.state = r.Next
		return r.Outputs, true
	case policy.Ignored:
		return 0, true
	}
	w.fail(laneBadVerdict, k, uint8(t))
	w.badState = l.state
	return 0, false
}

// apply carries out the outputs of a step at k in the family's order, and
// reports whether it started an activation and reported one interrupted.
func (m *laneModel) apply(w *LaneWorld, k int, t policy.TriggerID, out policy.Outputs) (started, reported bool) {
	l := &w.lanes[k]
	for o := uint64(out); o != 0 && w.bad == laneOK; o &= o - 1 {
		switch LaneOutputs(1) << bits.TrailingZeros64(o) {
		case LaneOutputDequeue:
			if !l.queued {
				w.fail(laneBadDequeue, k, 0)
			}
			w.unqueue(k)
		case LaneOutputUnreserve:
			if !l.reserved {
				w.fail(laneBadUnreserve, k, 0)
			}
			l.reserved = false
		case LaneOutputInterrupt:
			l.interrupted = l.acts > 0
		case LaneOutputReleaseSlot:
			if l.slots == 0 {
				w.fail(laneBadRelease, k, 0)
				break
			}
			l.slots--
		case LaneOutputReserve:
			if l.reserved {
				w.fail(laneBadReserve, k, 0)
			}
			l.reserved = true
		case LaneOutputEnqueue:
			if l.queued {
				w.fail(laneBadEnqueue, k, 0)
				break
			}
			w.enqueue(k)
		case LaneOutputStart:
			m.start(w, k)
			started = true
		case LaneOutputForget:
			l.entry = false
		case LaneOutputReportInterrupted:
			reported = true
		case LaneOutputStarted, LaneOutputQueued, LaneOutputCoalesced, LaneOutputQueueFull:
			if t != laneTrigWake {
				w.fail(laneBadStrayAnswer, k, uint8(t))
			}
		}
	}
	return started, reported
}

// start starts an activation of k, after checking that one may start.
func (m *laneModel) start(w *LaneWorld, k int) {
	l := &w.lanes[k]
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
	m.syncWait(w, k)
}

// syncWait keeps the ghost wait order: k waits while it owes a wake and
// runs nothing, behind the keys whose wait began earlier.
func (m *laneModel) syncWait(w *LaneWorld, k int) {
	l := &w.lanes[k]
	switch waiting, pos := l.owed && l.acts == 0, w.waitPos(k); {
	case waiting && pos < 0:
		w.waits[w.wlen] = uint8(k)
		w.wlen++
	case !waiting && pos >= 0:
		copy(w.waits[pos:w.wlen], w.waits[pos+1:w.wlen])
		w.wlen--
		w.waits[w.wlen] = 0 // equal worlds must be equal values
	}
}

// waitPos returns k's place in the ghost wait order, or -1.
func (w *LaneWorld) waitPos(k int) int {
	for i, x := range w.waits[:w.wlen] {
		if int(x) == k {
			return i
		}
	}
	return -1
}

func (w *LaneWorld) enqueue(k int) {
	w.queue[w.qlen] = uint8(k)
	w.qlen++
	w.lanes[k].queued = true
}

// unqueue removes k from the queue, if it is there.
func (w *LaneWorld) unqueue(k int) {
	for i, x := range w.queue[:w.qlen] {
		if int(x) == k {
			copy(w.queue[i:w.qlen], w.queue[i+1:w.qlen])
			w.qlen--
			w.queue[w.qlen] = 0 // equal worlds must be equal values
			break
		}
	}
	w.lanes[k].queued = false
}

// invariants lists the properties every reachable world must have: first
// those a move breaks while the runtime carries it out (recorded in bad),
// then those of the runtime's variables.
func (m *laneModel) invariants() []modelcheck.Invariant[LaneWorld] {
	var invs []modelcheck.Invariant[LaneWorld]
	for _, name := range []string{laneInvRuntime, laneInvClosed, laneInvBidden, laneInvFair,
		laneInvAnswer, laneInvReport, laneInvInterrupt} {
		invs = append(invs, modelcheck.Invariant[LaneWorld]{Name: name, Check: m.eventCheck(name)})
	}
	return append(invs,
		modelcheck.Invariant[LaneWorld]{Name: laneInvOne, Check: m.checkOne},
		modelcheck.Invariant[LaneWorld]{Name: laneInvConcurrent, Check: m.checkConcurrent},
		modelcheck.Invariant[LaneWorld]{Name: laneInvQueued, Check: m.checkQueued},
		modelcheck.Invariant[LaneWorld]{Name: laneInvSlots, Check: m.checkSlots},
		modelcheck.Invariant[LaneWorld]{Name: laneInvServed, Check: m.checkServed},
		modelcheck.Invariant[LaneWorld]{Name: laneInvPlaces, Check: m.checkPlaces},
		modelcheck.Invariant[LaneWorld]{Name: laneInvEntries, Check: m.checkEntries},
	)
}

// eventCheck returns the check of the event invariant name: it fails when
// the move to the world broke it.
func (m *laneModel) eventCheck(name string) func(LaneWorld) error {
	return func(w LaneWorld) error {
		if w.bad == laneOK || laneBadInfo[w.bad].inv != name {
			return nil
		}
		return fmt.Errorf(laneBadInfo[w.bad].text, laneKeyName(int(w.badKey)),
			m.triggerName(policy.TriggerID(w.badArg)), m.stateName(w.badState), laneKeyName(int(w.badArg)))
	}
}

func (m *laneModel) checkOne(w LaneWorld) error {
	for k := range m.keys {
		if n := w.lanes[k].acts; n > 1 {
			return fmt.Errorf("%s runs %d activations", laneKeyName(k), n)
		}
	}
	return nil
}

func (m *laneModel) checkConcurrent(w LaneWorld) error {
	running := 0
	for k := range m.keys {
		running += int(w.lanes[k].acts)
	}
	if running > m.maxConc {
		return fmt.Errorf("%d activations run, MaxConcurrent is %d", running, m.maxConc)
	}
	return nil
}

func (m *laneModel) checkQueued(w LaneWorld) error {
	reserved := 0
	for k := range m.keys {
		if w.lanes[k].reserved {
			reserved++
		}
	}
	if m.maxQueued > 0 && int(w.qlen)+reserved > m.maxQueued {
		return fmt.Errorf("queued lanes (%d) plus reserved places (%d) exceed MaxQueued %d", w.qlen, reserved, m.maxQueued)
	}
	return nil
}

func (m *laneModel) checkSlots(w LaneWorld) error {
	for k := range m.keys {
		if l := &w.lanes[k]; l.slots != l.acts {
			return fmt.Errorf("%s holds %d slots and runs %d activations", laneKeyName(k), l.slots, l.acts)
		}
	}
	return nil
}

func (m *laneModel) checkServed(w LaneWorld) error {
	for k := range m.keys {
		if l := &w.lanes[k]; l.owed && l.acts == 0 && !l.queued {
			return fmt.Errorf("%s owes a wake, runs nothing and is not in the queue, so nothing will serve the wake", laneKeyName(k))
		}
	}
	return nil
}

func (m *laneModel) checkPlaces(w LaneWorld) error {
	for k := range m.keys {
		l, name := &w.lanes[k], laneKeyName(k)
		switch {
		case l.queued && !l.owed:
			return fmt.Errorf("%s waits in the queue but owes no wake", name)
		case l.queued && l.acts > 0:
			return fmt.Errorf("%s waits in the queue while its activation runs", name)
		case l.reserved && !(l.owed && l.acts > 0):
			return fmt.Errorf("%s holds a reserved place but owes no follow-up to a running activation", name)
		case l.owed && l.acts > 0 && !l.reserved:
			return fmt.Errorf("%s owes a follow-up but holds no queue place for it", name)
		}
	}
	return nil
}

func (m *laneModel) checkEntries(w LaneWorld) error {
	for k := range m.keys {
		switch l := &w.lanes[k]; {
		case l.entry && !l.holds():
			return fmt.Errorf("%s keeps an entry (%s) though it holds nothing, so the map only grows", laneKeyName(k), m.stateName(l.state))
		case !l.entry && l.holds():
			return fmt.Errorf("%s was forgotten though it holds %s", laneKeyName(k), laneHeld(l))
		}
	}
	return nil
}

// laneHeld says what a lane holds.
func laneHeld(l *laneVars) string {
	var held []string
	if l.acts > 0 {
		held = append(held, "a running activation")
	}
	if l.slots > 0 {
		held = append(held, "a slot")
	}
	if l.queued {
		held = append(held, "a queue position")
	}
	if l.reserved {
		held = append(held, "a reserved place")
	}
	return strings.Join(held, ", ")
}

// owes describes what a world without moves still owes. Only a world after
// the callers stopped, with no activation running, has no moves; in it
// every wake must have been served and every lane forgotten.
func (m *laneModel) owes(w LaneWorld) string {
	for k := range m.keys {
		l, name := &w.lanes[k], laneKeyName(k)
		switch {
		case l.owed:
			return name + " owes a wake that nothing will serve"
		case l.queued && m.slotFree(&w):
			return name + " waits in the queue while a slot is free"
		case l.holds():
			return name + " still holds " + laneHeld(l)
		case l.entry:
			return name + " still has an entry"
		}
	}
	return ""
}

// canonical renames the keys so that their records, with their places in
// the queue and the wait order, are sorted: keys are interchangeable, so
// worlds that differ only in key names are one world.
func (m *laneModel) canonical(w LaneWorld) LaneWorld {
	var rank [LaneMaxKeys]uint64
	for i, k := range w.queue[:w.qlen] {
		rank[k] |= uint64(i+1) << 40
	}
	for i, k := range w.waits[:w.wlen] {
		rank[k] |= uint64(i+1) << 48
	}
	var order [LaneMaxKeys]uint8 // order[new] = old
	for k := range m.keys {
		rank[k] |= w.lanes[k].pack()
		order[k] = uint8(k)
	}
	moved := false
	for i := 1; i < m.keys; i++ {
		for j := i; j > 0 && rank[order[j]] < rank[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
			moved = true
		}
	}
	if !moved {
		return w
	}
	var to [LaneMaxKeys]uint8 // to[old] = new
	c := w
	for nu, old := range order[:m.keys] {
		c.lanes[nu] = w.lanes[old]
		to[old] = uint8(nu)
	}
	for i := range w.qlen {
		c.queue[i] = to[w.queue[i]]
	}
	for i := range w.wlen {
		c.waits[i] = to[w.waits[i]]
	}
	if w.bad != laneOK {
		c.badKey = to[w.badKey]
		if w.bad == laneBadStartUnfair {
			c.badArg = to[w.badArg]
		}
	}
	return c
}

// pack encodes the lane's record in the low 40 bits.
func (l *laneVars) pack() uint64 {
	var flags uint64
	for i, b := range [...]bool{l.entry, l.reserved, l.queued, l.interrupted, l.timer, l.owed} {
		if b {
			flags |= 1 << i
		}
	}
	return uint64(l.state) | uint64(l.acts)<<8 | uint64(l.slots)<<16 | flags<<24
}

// format renders a world for traces, one segment per key, then the queue
// and the totals.
func (m *laneModel) format(w LaneWorld) string {
	var b strings.Builder
	for k := range m.keys {
		l := &w.lanes[k]
		if k > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(laneKeyName(k) + " ")
		if !l.entry && !l.holds() && !l.owed {
			b.WriteString("-")
			continue
		}
		b.WriteString(m.stateName(l.state))
		if tags := laneTags(l); tags != "" {
			b.WriteString(" [" + tags + "]")
		}
	}
	b.WriteString("; queue " + m.keyList(w.queue[:w.qlen]))
	if !slices.Equal(w.waits[:w.wlen], w.queue[:w.qlen]) {
		b.WriteString(", waiting " + m.keyList(w.waits[:w.wlen]))
	}
	used, reserved := 0, 0
	for k := range m.keys {
		used += int(w.lanes[k].slots)
		if w.lanes[k].reserved {
			reserved++
		}
	}
	fmt.Fprintf(&b, "; slots %d/%d", used, m.maxConc)
	if m.maxQueued > 0 {
		fmt.Fprintf(&b, ", places %d/%d", int(w.qlen)+reserved, m.maxQueued)
	}
	if w.closed {
		b.WriteString("; closed")
	}
	if w.quiet {
		b.WriteString("; callers stopped")
	}
	return b.String()
}

// laneTags lists a lane's bookkeeping for format.
func laneTags(l *laneVars) string {
	var tags []string
	if !l.entry {
		tags = append(tags, "no entry")
	}
	switch {
	case l.acts == 1:
		tags = append(tags, "running")
	case l.acts > 1:
		tags = append(tags, fmt.Sprintf("%d running", l.acts))
	}
	if l.interrupted {
		tags = append(tags, "interrupted")
	}
	if l.timer {
		tags = append(tags, "timer")
	}
	if l.slots != l.acts {
		tags = append(tags, fmt.Sprintf("%d slots", l.slots))
	}
	if l.reserved {
		tags = append(tags, "reserved")
	}
	if l.owed {
		tags = append(tags, "owes a wake")
	}
	return strings.Join(tags, ", ")
}

func (m *laneModel) keyList(keys []uint8) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = laneKeyName(int(k))
	}
	return "[" + strings.Join(names, " ") + "]"
}

// stateName and triggerName name IDs by the policy's table.
func (m *laneModel) stateName(s policy.StateID) string {
	if m.table != nil && int(s) < len(m.table.States) {
		return m.table.States[s].Name
	}
	return "state " + strconv.Itoa(int(s))
}

func (m *laneModel) triggerName(t policy.TriggerID) string {
	if m.table != nil && int(t) < len(m.table.Triggers) {
		return m.table.Triggers[t].Name
	}
	return "trigger " + strconv.Itoa(int(t))
}
