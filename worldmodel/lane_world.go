package worldmodel

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rivus/collab/internal/lanestep"
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
	// started and reported are scratch of one step: its Wake started an
	// activation of the lane; it reported an owed activation interrupted.
	// settle clears them, so that equal worlds are equal values.
	started, reported bool
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
	laneTrigWake    = policy.LaneWake
	laneTrigGranted = policy.LaneSlotGranted
	laneTrigEnded   = policy.LaneActivationEnded
	laneTrigTimeout = policy.LaneTimeout
	laneTrigCancel  = policy.LaneCancel
	laneTrigClose   = policy.LaneClose

	laneAnswers  = (policy.LaneOutputStarted | policy.LaneOutputQueued | policy.LaneOutputCoalesced | policy.LaneOutputQueueFull)
	laneAccepted = (policy.LaneOutputStarted | policy.LaneOutputQueued | policy.LaneOutputCoalesced)
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
	laneBadTwoActivations         // start while the lane's activation still holds its slot
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
	laneBadTwoActivations: {laneInvOne, "%[1]s started a second activation while its first holds a slot"},
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
	limits      lanestep.Limits
	scratch     *LaneWorld // where Next works out each move; one Check at a time
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
//
// The model carries out every step with package lanes' own step code
// (internal/lanestep), over the world's compact bookkeeping, so that what
// is checked is what ships. Its moves are worked out in a scratch world of
// the model: run one Check at a time on it.
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
		Fork:       m.fork,
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
	}
	if err := checkTable("lane", p); err != nil {
		return nil, err
	}
	switch {
	case b.Keys < 1 || b.Keys > LaneMaxKeys:
		return nil, &ModelError{"lane", "Keys", fmt.Sprintf("%d is not in [1, %d]", b.Keys, LaneMaxKeys)}
	case b.MaxConcurrent < 1 || b.MaxConcurrent > 255:
		return nil, &ModelError{"lane", "MaxConcurrent", fmt.Sprintf("%d is not in [1, 255]", b.MaxConcurrent)}
	case b.MaxQueued < 0 || b.MaxQueued > 255:
		return nil, &ModelError{"lane", "MaxQueued", fmt.Sprintf("%d is not in [0, 255] (0: no bound)", b.MaxQueued)}
	}
	m := &laneModel{p: p, table: p.Table(), keys: b.Keys, initial: p.Initial(),
		limits:  lanestep.Limits{MaxConcurrent: b.MaxConcurrent, MaxQueued: b.MaxQueued},
		scratch: new(LaneWorld)}
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

// fork returns the Next of a copy of m with a scratch world of its own,
// for one worker of a parallel search.
func (m *laneModel) fork() func(LaneWorld, func(string, LaneWorld)) {
	c := *m
	c.scratch = new(LaneWorld)
	return c.next
}
