package lanestep_test

import (
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/internal/lanestep"
	"github.com/rivus/collab/policy"
	"github.com/rivus/collab/worldmodel"
)

// book is the lanes' bookkeeping as the step reads and changes it: each
// lane's state, the queue in arrival order, the owed follow-ups' places
// and the slots. It records what the step asks for; veto makes Fired say
// false, as a world that found the step wrong does.
type book struct {
	states   map[string]policy.StateID
	queue    []string
	reserved map[string]bool
	slots    map[string]bool
	did      []string
	fired    int
	veto     bool

	fault        lanestep.Fault
	faultLane    string
	faultTrigger policy.TriggerID
}

func newBook() *book {
	return &book{states: map[string]policy.StateID{}, reserved: map[string]bool{}, slots: map[string]bool{}}
}

func (b *book) State(l string) policy.StateID                  { return b.states[l] }
func (b *book) SetState(l string, s policy.StateID)            { b.states[l] = s }
func (b *book) Queued(l string) bool                           { return slices.Contains(b.queue, l) }
func (b *book) QueueLen() int                                  { return len(b.queue) }
func (b *book) Head() string                                   { return b.queue[0] }
func (b *book) Enqueue(l string)                               { b.queue = append(b.queue, l); b.do("enqueue", l) }
func (b *book) Reserved(l string) bool                         { return b.reserved[l] }
func (b *book) HoldsSlot(l string) bool                        { return b.slots[l] }
func (b *book) Start(l string, _ policy.TriggerID)             { b.slots[l] = true; b.do("start", l) }
func (b *book) ReleaseSlot(l string)                           { delete(b.slots, l); b.do("release", l) }
func (b *book) Interrupt(l string, _ policy.TriggerID)         { b.do("interrupt", l) }
func (b *book) Forget(l string)                                { b.do("forget", l) }
func (b *book) ReportInterrupted(l string, _ policy.TriggerID) { b.do("report", l) }

func (b *book) Dequeue(l string, _ policy.Outputs) {
	b.queue = slices.DeleteFunc(b.queue, func(q string) bool { return q == l })
	b.do("dequeue", l)
}

func (b *book) SetReserved(l string, held bool) {
	b.reserved[l] = held
	if held {
		b.do("reserve", l)
	} else {
		b.do("unreserve", l)
	}
}

func (b *book) Places() int {
	n := 0
	for _, held := range b.reserved {
		if held {
			n++
		}
	}
	return n
}

func (b *book) SlotsInUse() int { return len(b.slots) }

func (b *book) Fired(string, policy.TriggerID, policy.Result) bool {
	b.fired++
	return !b.veto
}

func (b *book) Fault(l string, f lanestep.Fault, t policy.TriggerID) {
	b.fault, b.faultLane, b.faultTrigger = f, l, t
}

func (b *book) do(what, l string) { b.did = append(b.did, what+" "+l) }

// took returns what the step did since the last call, and forgets it.
func (b *book) took() []string {
	d := b.did
	b.did = nil
	return d
}

func want(t *testing.T, b *book, what ...string) {
	t.Helper()
	if got := b.took(); !slices.Equal(got, what) {
		t.Fatalf("the step did %q, want %q", got, what)
	}
}

// answers are the outputs that answer a Wake.
const answers = policy.LaneOutputStarted | policy.LaneOutputQueued | policy.LaneOutputCoalesced | policy.LaneOutputQueueFull

// step fires trigger at l through p and fails the test if the step
// stopped; it returns the step's answer to a Wake, if any.
func step(t *testing.T, p policy.Policy, lim lanestep.Limits, b *book, l string, trigger policy.TriggerID) policy.Outputs {
	t.Helper()
	res, ok := lanestep.Step[string](p, lim, b, l, trigger)
	if !ok {
		t.Fatalf("%s's step %s stopped (fault %v)", l, p.Table().Triggers[trigger].Name, b.fault)
	}
	return res.Outputs & answers
}

func grant(t *testing.T, p policy.Policy, lim lanestep.Limits, b *book) {
	t.Helper()
	if !lanestep.Grant[string](p, lim, b) {
		t.Fatalf("Grant stopped (fault %v at %q)", b.fault, b.faultLane)
	}
}

func wantState(t *testing.T, b *book, l string, s fsm.LaneState) {
	t.Helper()
	if got := fsm.LaneState(b.states[l]); got != s {
		t.Fatalf("%s is %v, want %v", l, got, s)
	}
}

// override is a policy that answers one state and trigger with outputs
// and every other step as the shipped policy does: a policy that asks
// what no shipped row asks.
type override struct {
	policy.Policy
	state   fsm.LaneState
	trigger policy.TriggerID
	outputs policy.Outputs
}

func (o override) Step(s policy.StateID, t policy.TriggerID, f policy.Facts) policy.Result {
	if fsm.LaneState(s) == o.state && t == o.trigger {
		return policy.Result{Next: s, Outputs: o.outputs, Verdict: policy.Fired}
	}
	return o.Policy.Step(s, t, f)
}

// TestFacts: a slot is free only while nobody waits and fewer than
// MaxConcurrent run; there is queue room while waiting lanes plus owed
// follow-ups stay under MaxQueued, always without a bound (0) and never
// with a negative one.
func TestFacts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lim     lanestep.Limits
		queued  int
		places  int
		running int
		facts   policy.Facts
	}{
		{"empty", lanestep.Limits{MaxConcurrent: 1}, 0, 0, 0,
			policy.LaneFactQueueEmpty | policy.LaneFactSlotFree | policy.LaneFactQueueRoom},
		{"slots taken", lanestep.Limits{MaxConcurrent: 2}, 0, 0, 2,
			policy.LaneFactQueueEmpty | policy.LaneFactQueueRoom},
		{"a lane waits while a slot is free", lanestep.Limits{MaxConcurrent: 2}, 1, 0, 1,
			policy.LaneFactQueueRoom},
		{"room under the bound", lanestep.Limits{MaxConcurrent: 1, MaxQueued: 3}, 1, 1, 1,
			policy.LaneFactQueueRoom},
		{"places fill the bound", lanestep.Limits{MaxConcurrent: 1, MaxQueued: 2}, 1, 1, 1,
			0},
		{"an owed follow-up holds the only place", lanestep.Limits{MaxConcurrent: 1, MaxQueued: 1}, 0, 1, 1,
			policy.LaneFactQueueEmpty},
		{"no queue at all", lanestep.Limits{MaxConcurrent: 1, MaxQueued: -1}, 0, 0, 0,
			policy.LaneFactQueueEmpty | policy.LaneFactSlotFree},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBook()
			for i := range tc.queued {
				b.queue = append(b.queue, "q"+strconv.Itoa(i))
			}
			for i := range tc.places {
				b.reserved["p"+strconv.Itoa(i)] = true
			}
			for i := range tc.running {
				b.slots["r"+strconv.Itoa(i)] = true
			}
			if got := lanestep.Facts[string](tc.lim, b); got != tc.facts {
				t.Fatalf("facts %03b, want %03b", got, tc.facts)
			}
		})
	}
}

// TestOutputsInFamilyOrder: a step carries out its outputs in the
// family's order (dequeue, unreserve, interrupt, releaseSlot, reserve,
// enqueue, start, forget, reportInterrupted), not in the order its row
// lists them: an owed follow-up gives back its place and slot before it
// starts or queues again, and a cancelled waiter is forgotten before its
// dropped wake is reported. A row with all nine pins the whole order.
func TestOutputsInFamilyOrder(t *testing.T) {
	all := policy.LaneOutputDequeue | policy.LaneOutputUnreserve | policy.LaneOutputInterrupt |
		policy.LaneOutputReleaseSlot | policy.LaneOutputReserve | policy.LaneOutputEnqueue |
		policy.LaneOutputStart | policy.LaneOutputForget | policy.LaneOutputReportInterrupted
	lim := lanestep.Limits{MaxConcurrent: 1}
	for _, tc := range []struct {
		name    string
		p       policy.Policy
		state   fsm.LaneState
		queued  bool // a waits in the queue
		owed    bool // a holds a place for a follow-up
		running bool // a holds a slot
		other   bool // b waits in the queue
		trigger policy.TriggerID
		did     []string
	}{
		{"follow-up starts at once", fsm.LanePolicy, fsm.LaneRunningOwed, false, true, true, false,
			policy.LaneActivationEnded, []string{"unreserve a", "release a", "start a"}},
		{"follow-up queues behind a waiter", fsm.LanePolicy, fsm.LaneRunningOwed, false, true, true, true,
			policy.LaneActivationEnded, []string{"unreserve a", "release a", "enqueue a"}},
		{"cancel of a waiter", fsm.LanePolicy, fsm.LaneWaiting, true, false, false, false,
			policy.LaneCancel, []string{"dequeue a", "forget a", "report a"}},
		{"cancel of an owed follow-up", fsm.LanePolicy, fsm.LaneRunningOwed, false, true, true, false,
			policy.LaneCancel, []string{"unreserve a", "interrupt a", "report a"}},
		{"every output", override{fsm.LanePolicy, fsm.LaneRunning, policy.LaneTimeout, all}, fsm.LaneRunning, true, true, true, false,
			policy.LaneTimeout, []string{"dequeue a", "unreserve a", "interrupt a", "release a", "reserve a", "enqueue a", "start a", "forget a", "report a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBook()
			b.states["a"] = policy.StateID(tc.state)
			if tc.queued {
				b.queue = append(b.queue, "a")
			}
			if tc.other {
				b.states["b"] = policy.StateID(fsm.LaneWaiting)
				b.queue = append(b.queue, "b")
			}
			b.reserved["a"], b.slots["a"] = tc.owed, tc.running
			if !tc.running {
				delete(b.slots, "a")
			}
			step(t, tc.p, lim, b, "a", tc.trigger)
			want(t, b, tc.did...)
		})
	}
}

// TestGrantServesLongestWaiters: Grant hands each free slot to the head of
// the queue, in arrival order, and stops when the slots are taken; a
// waiter that cancels leaves without moving the others.
func TestGrantServesLongestWaiters(t *testing.T) {
	p := fsm.LanePolicy
	lim := lanestep.Limits{MaxConcurrent: 2}
	b := newBook()
	for _, l := range []string{"a", "b", "c", "d", "e"} {
		step(t, p, lim, b, l, policy.LaneWake)
	}
	want(t, b, "start a", "start b", "enqueue c", "enqueue d", "enqueue e")

	step(t, p, lim, b, "d", policy.LaneCancel)
	want(t, b, "dequeue d", "forget d", "report d")
	step(t, p, lim, b, "b", policy.LaneActivationEnded)
	grant(t, p, lim, b)
	want(t, b, "release b", "forget b", "dequeue c", "start c")
	step(t, p, lim, b, "a", policy.LaneActivationEnded)
	grant(t, p, lim, b)
	want(t, b, "release a", "forget a", "dequeue e", "start e")
	wantState(t, b, "c", fsm.LaneRunning)
	wantState(t, b, "e", fsm.LaneRunning)

	step(t, p, lim, b, "f", policy.LaneWake)
	b.took()
	grant(t, p, lim, b) // both slots are taken: f waits
	want(t, b)
	if !slices.Equal(b.queue, []string{"f"}) {
		t.Fatalf("the queue is %q, want f alone", b.queue)
	}
}

// TestOwedFollowUp: a Wake while the lane runs owes one follow-up, which
// holds a queue place (so the bound counts it) and coalesces later wakes;
// when the activation ends the follow-up starts at once if nobody waits,
// and otherwise goes to the back of the queue and waits its turn.
func TestOwedFollowUp(t *testing.T) {
	p := fsm.LanePolicy
	lim := lanestep.Limits{MaxConcurrent: 1, MaxQueued: 2}
	b := newBook()
	for _, tc := range []struct {
		lane    string
		trigger policy.TriggerID
		answer  policy.Outputs
		did     []string
	}{
		{"a", policy.LaneWake, policy.LaneOutputStarted, []string{"start a"}},
		{"a", policy.LaneWake, policy.LaneOutputQueued, []string{"reserve a"}},
		{"a", policy.LaneWake, policy.LaneOutputCoalesced, nil},
		{"a", policy.LaneActivationEnded, 0, []string{"unreserve a", "release a", "start a"}},
		{"a", policy.LaneWake, policy.LaneOutputQueued, []string{"reserve a"}},
		{"b", policy.LaneWake, policy.LaneOutputQueued, []string{"enqueue b"}},
		{"c", policy.LaneWake, policy.LaneOutputQueueFull, []string{"forget c"}}, // b and a's follow-up fill MaxQueued
		{"a", policy.LaneActivationEnded, 0, []string{"unreserve a", "release a", "enqueue a"}},
	} {
		if got := step(t, p, lim, b, tc.lane, tc.trigger); got != tc.answer {
			t.Fatalf("%s's %s answered %b, want %b", tc.lane, p.Table().Triggers[tc.trigger].Name, got, tc.answer)
		}
		want(t, b, tc.did...)
	}
	grant(t, p, lim, b)
	want(t, b, "dequeue b", "start b")
	step(t, p, lim, b, "b", policy.LaneActivationEnded)
	grant(t, p, lim, b)
	want(t, b, "release b", "forget b", "dequeue a", "start a")
	if b.Places() != 0 || len(b.queue) != 0 {
		t.Fatalf("places %d, queue %q after the follow-ups ran; want none", b.Places(), b.queue)
	}
}

// TestEndedActivationReleasesSlot: an activation that ends gives its slot
// back, from Running, Cancelling or Closed alike, and the lane is
// forgotten; the next Grant hands the slot to the waiting lane. An
// interrupt alone keeps the slot until the activation ends.
func TestEndedActivationReleasesSlot(t *testing.T) {
	p := fsm.LanePolicy
	lim := lanestep.Limits{MaxConcurrent: 1}
	for _, tc := range []struct {
		before fsm.LaneState
		after  fsm.LaneState
		waiter bool // b waits for the slot
	}{
		{fsm.LaneRunning, fsm.LaneIdle, true},
		{fsm.LaneCancelling, fsm.LaneIdle, true},
		{fsm.LaneClosed, fsm.LaneClosed, false},
	} {
		t.Run(tc.before.String(), func(t *testing.T) {
			b := newBook()
			b.states["a"], b.slots["a"] = policy.StateID(tc.before), true
			if tc.waiter {
				b.states["b"], b.queue = policy.StateID(fsm.LaneWaiting), []string{"b"}
			}
			if tc.before != fsm.LaneClosed {
				step(t, p, lim, b, "a", policy.LaneTimeout)
				grant(t, p, lim, b)
				b.took()
				if !b.slots["a"] {
					t.Fatal("an interrupt gave the slot back before the activation ended")
				}
			}
			step(t, p, lim, b, "a", policy.LaneActivationEnded)
			want(t, b, "release a", "forget a")
			wantState(t, b, "a", tc.after)
			grant(t, p, lim, b)
			if tc.waiter {
				want(t, b, "dequeue b", "start b")
			} else {
				want(t, b)
			}
		})
	}
}

// TestRefusedTriggerIsFault: a rejected trigger the lane must handle is a
// Refused fault that stops the step before the state or the bookkeeping
// changes; a rejected Wake is an answer (the lanes are closed), and an
// ignored trigger does nothing; neither of the two reaches Fired.
func TestRefusedTriggerIsFault(t *testing.T) {
	p := fsm.LanePolicy
	lim := lanestep.Limits{MaxConcurrent: 1}
	for _, tc := range []struct {
		name    string
		state   fsm.LaneState
		trigger policy.TriggerID
		ok      bool
		fault   lanestep.Fault
	}{
		{"SlotGranted to an idle lane", fsm.LaneIdle, policy.LaneSlotGranted, false, lanestep.Refused},
		{"ActivationEnded of a waiter", fsm.LaneWaiting, policy.LaneActivationEnded, false, lanestep.Refused},
		{"Wake after Close", fsm.LaneClosed, policy.LaneWake, true, 0},
		{"Timeout of an idle lane", fsm.LaneIdle, policy.LaneTimeout, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBook()
			b.states["a"] = policy.StateID(tc.state)
			res, ok := lanestep.Step[string](p, lim, b, "a", tc.trigger)
			if ok != tc.ok || b.fault != tc.fault {
				t.Fatalf("ok %v, fault %v; want %v, %v", ok, b.fault, tc.ok, tc.fault)
			}
			if tc.fault != 0 && (b.faultLane != "a" || b.faultTrigger != tc.trigger) {
				t.Fatalf("fault at %q on %d, want at a on %d", b.faultLane, b.faultTrigger, tc.trigger)
			}
			if res.Outputs != 0 || b.fired != 0 {
				t.Fatalf("outputs %b, %d steps fired; want none", res.Outputs, b.fired)
			}
			want(t, b)
			wantState(t, b, "a", tc.state)
		})
	}
}

// TestMisfitOutputsAreFaults: an output the bookkeeping cannot carry out
// is the fault that names it, and the step stops there: the outputs
// before it are done, the ones after it are not. Each row changes one
// step of the shipped policy.
func TestMisfitOutputsAreFaults(t *testing.T) {
	lim := lanestep.Limits{MaxConcurrent: 2}
	for _, tc := range []struct {
		fault   lanestep.Fault
		state   fsm.LaneState // of a, which holds a slot unless it waits
		trigger policy.TriggerID
		outputs policy.Outputs
		did     []string
	}{
		{lanestep.StrayAnswer, fsm.LaneRunning, policy.LaneTimeout,
			policy.LaneOutputInterrupt | policy.LaneOutputQueued, nil},
		{lanestep.DequeueUnqueued, fsm.LaneRunning, policy.LaneTimeout,
			policy.LaneOutputDequeue | policy.LaneOutputInterrupt, nil},
		{lanestep.UnreserveNone, fsm.LaneRunning, policy.LaneCancel,
			policy.LaneOutputUnreserve | policy.LaneOutputInterrupt, nil},
		{lanestep.ReleaseNone, fsm.LaneWaiting, policy.LaneCancel,
			policy.LaneOutputDequeue | policy.LaneOutputReleaseSlot | policy.LaneOutputForget, []string{"dequeue a"}},
		{lanestep.ReserveHeld, fsm.LaneRunningOwed, policy.LaneWake,
			policy.LaneOutputReserve | policy.LaneOutputQueued, nil},
		{lanestep.EnqueueQueued, fsm.LaneWaiting, policy.LaneWake,
			policy.LaneOutputEnqueue | policy.LaneOutputQueued, nil},
		{lanestep.StartRunning, fsm.LaneRunning, policy.LaneTimeout,
			policy.LaneOutputInterrupt | policy.LaneOutputStart | policy.LaneOutputForget, []string{"interrupt a"}},
	} {
		t.Run(tc.fault.String(), func(t *testing.T) {
			p := override{fsm.LanePolicy, tc.state, tc.trigger, tc.outputs}
			b := newBook()
			b.states["a"] = policy.StateID(tc.state)
			switch tc.state {
			case fsm.LaneWaiting:
				b.queue = []string{"a"}
			case fsm.LaneRunningOwed:
				b.slots["a"], b.reserved["a"] = true, true
			default:
				b.slots["a"] = true
			}
			if _, ok := lanestep.Step[string](p, lim, b, "a", tc.trigger); ok {
				t.Fatal("the step did not stop")
			}
			if b.fault != tc.fault || b.faultLane != "a" || b.faultTrigger != tc.trigger {
				t.Fatalf("fault %v at %q on %d, want %v at a on %d", b.fault, b.faultLane, b.faultTrigger, tc.fault, tc.trigger)
			}
			want(t, b, tc.did...)
		})
	}
}

// TestGrantThatKeepsHeadIsFault: a policy whose SlotGranted starts the
// lane but leaves it in the queue would have Grant hand the same lane
// every free slot; Grant reports GrantKept at that lane and stops.
func TestGrantThatKeepsHeadIsFault(t *testing.T) {
	src, err := os.ReadFile("../../worldmodel/testdata/mutations/lane-grant-keeps-place.fsm")
	if err != nil {
		t.Fatal(err)
	}
	bad, err := worldmodel.SpecPolicy("lane-grant-keeps-place.fsm", src)
	if err != nil {
		t.Fatal(err)
	}
	lim := lanestep.Limits{MaxConcurrent: 2}
	b := newBook()
	b.states["a"], b.queue = policy.StateID(fsm.LaneWaiting), []string{"a"}
	if lanestep.Grant[string](bad, lim, b) {
		t.Fatal("Grant did not stop")
	}
	want(t, b, "start a")
	if b.fault != lanestep.GrantKept || b.faultLane != "a" || b.faultTrigger != policy.LaneSlotGranted {
		t.Fatalf("fault %v at %q on %d, want %v at a on SlotGranted", b.fault, b.faultLane, b.faultTrigger, lanestep.GrantKept)
	}
}

// TestStepStopsWhenFiredSaysNo: Fired hears the step with its next state
// written and decides whether its outputs are carried out: a world that
// found the step wrong says false, and neither the step nor a Grant goes
// on, nor does either report a fault of its own.
func TestStepStopsWhenFiredSaysNo(t *testing.T) {
	p := fsm.LanePolicy
	lim := lanestep.Limits{MaxConcurrent: 1}
	b := newBook()
	b.veto = true
	if _, ok := lanestep.Step[string](p, lim, b, "a", policy.LaneWake); ok {
		t.Fatal("the step went on after Fired said false")
	}
	want(t, b)
	wantState(t, b, "a", fsm.LaneRunning)

	b.states["b"], b.queue = policy.StateID(fsm.LaneWaiting), []string{"b"}
	if lanestep.Grant[string](p, lim, b) {
		t.Fatal("Grant went on after Fired said false")
	}
	want(t, b)
	if b.fired != 2 || b.fault != 0 || !slices.Equal(b.queue, []string{"b"}) {
		t.Fatalf("fired %d, fault %v, queue %q; want 2 steps heard, no fault, b still waiting", b.fired, b.fault, b.queue)
	}
}

// TestFaultText: each fault says what the policy asked, and a value
// outside the list still reads as a sentence.
func TestFaultText(t *testing.T) {
	seen := map[string]bool{}
	for f := lanestep.Refused; f <= lanestep.GrantKept; f++ {
		s := f.String()
		if s == "" || seen[s] || s == lanestep.Fault(0).String() {
			t.Fatalf("fault %d reads %q", f, s)
		}
		seen[s] = true
	}
	if got := lanestep.Fault(200).String(); got != "do what the runtime does not know" {
		t.Fatalf("an unknown fault reads %q", got)
	}
}
