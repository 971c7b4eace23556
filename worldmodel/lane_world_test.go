package worldmodel

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// laneCheck explores p's lane world within b, with or without symmetry.
func laneCheck(t testing.TB, p policy.Policy, b LaneBounds, symmetry bool) (modelcheck.Result[LaneWorld], modelcheck.Model[LaneWorld]) {
	t.Helper()
	m, err := LaneModel(p, b)
	if err != nil {
		t.Fatal(err)
	}
	if !symmetry {
		m.Canonical = nil
	}
	return modelcheck.Check(m, modelcheck.Options{MaxStates: testMaxStates}), m
}

// laneTrace renders a violation's trace for a failure message.
func laneTrace(r modelcheck.Result[LaneWorld], m modelcheck.Model[LaneWorld]) string {
	if r.Violation == nil {
		return "(no violation)"
	}
	var b strings.Builder
	if err := r.Violation.WriteTrace(&b, m.Format); err != nil {
		return err.Error()
	}
	return b.String()
}

func TestLaneWorldShippedPolicyPasses(t *testing.T) {
	compiled := specPolicy(t, "../spec/lane.fsm", nil)
	for _, c := range []struct {
		name     string
		p        policy.Policy
		b        LaneBounds
		symmetry bool
	}{
		{"default", fsm.LanePolicy, DefaultLaneBounds(), false},
		{"default symmetric", fsm.LanePolicy, DefaultLaneBounds(), true},
		{"interpreted spec", compiled, DefaultLaneBounds(), false},
		{"4 keys", fsm.LanePolicy, LaneBounds{Keys: 4, MaxConcurrent: 2, MaxQueued: 2}, false},
		{"unbounded queue", fsm.LanePolicy, LaneBounds{Keys: 4, MaxConcurrent: 3, MaxQueued: 0}, false},
		{"one slot", fsm.LanePolicy, LaneBounds{Keys: 4, MaxConcurrent: 1, MaxQueued: 1}, false},
		{"5 keys symmetric", fsm.LanePolicy, LaneBounds{Keys: 5, MaxConcurrent: 3, MaxQueued: 3}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, m := laneCheck(t, c.p, c.b, c.symmetry)
			if r.Verdict != modelcheck.Passed {
				t.Fatalf("%s\n%s", r.Summary(), laneTrace(r, m))
			}
			t.Logf("%s", r.Summary())
		})
	}
}

// TestLaneWorldReachesEveryRow guards against a world too poor to find
// anything: at the default bounds every row of the shipped spec fires.
func TestLaneWorldReachesEveryRow(t *testing.T) {
	rec := newStepRecorder(fsm.LanePolicy)
	if r, m := laneCheck(t, rec, DefaultLaneBounds(), false); r.Verdict != modelcheck.Passed {
		t.Fatalf("%s\n%s", r.Summary(), laneTrace(r, m))
	}
	table := fsm.LanePolicy.Table()
	for _, row := range table.Rows {
		if !rec.fired[row.Line] {
			t.Errorf("lane.fsm:%d never fires at the default bounds", row.Line)
		}
	}
}

// laneMutations are the seeded bugs in testdata/mutations: the invariant
// that catches each, and the length of the shortest counterexample.
var laneMutations = []struct {
	file      string
	invariant string
	steps     int
}{
	{"lane-follow-up-dropped.fsm", laneInvServed, 3},
	{"lane-newest-waiter.fsm", laneInvFair, 5},
	{"lane-cancel-keeps-place.fsm", laneInvPlaces, 4},
	{"lane-wake-ignores-room.fsm", laneInvQueued, 5},
	{"lane-start-without-slot.fsm", laneInvConcurrent, 3},
	{"lane-wake-restarts.fsm", laneInvOne, 2},
	{"lane-cancel-keeps-slot.fsm", laneInvSlots, 3},
	{"lane-coalesced-lie.fsm", laneInvAnswer, 2},
	{"lane-cancel-silent.fsm", laneInvReport, 4},
	{"lane-timeout-ignored.fsm", laneInvInterrupt, 2},
	{"lane-cancel-restarts.fsm", laneInvBidden, 3},
	{"lane-close-skips-new-lanes.fsm", laneInvClosed, 2},
	{"lane-grant-keeps-place.fsm", laneInvRuntime, 4},
	{"lane-idle-entry-kept.fsm", laneInvEntries, 2},
}

func TestLaneWorldCatchesMutations(t *testing.T) {
	files, err := filepath.Glob("testdata/mutations/lane-*.fsm")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, c := range laneMutations {
		listed = append(listed, c.file)
	}
	for _, f := range files {
		if !slices.Contains(listed, filepath.Base(f)) {
			t.Errorf("%s is not in laneMutations", f)
		}
	}
	for _, c := range laneMutations {
		t.Run(strings.TrimSuffix(c.file, ".fsm"), func(t *testing.T) {
			path := filepath.Join("testdata", "mutations", c.file)
			if src, err := os.ReadFile(path); err != nil || !strings.Contains(string(src), "# mutation: ") {
				t.Fatalf("%s: no `# mutation:` comment (%v)", path, err)
			}
			p := specPolicy(t, path, nil)
			for _, symmetry := range []bool{false, true} {
				r, m := laneCheck(t, p, DefaultLaneBounds(), symmetry)
				if r.Verdict != modelcheck.Violated || r.Violation.Property != c.invariant || len(r.Violation.Trace)-1 != c.steps {
					t.Fatalf("symmetry %v: %s; want %q after %d steps\n%s", symmetry, r.Summary(), c.invariant, c.steps, laneTrace(r, m))
				}
				wantStory(t, m, r.Violation)
				wantParallelSame(t, m, modelcheck.Options{MaxStates: testMaxStates}, r)
				if !symmetry {
					t.Logf("%s", r.Summary())
				}
			}
		})
	}
}

// laneOverride is a policy that answers one state and trigger, for the
// facts its guard accepts, with result instead.
type laneOverride struct {
	policy.Policy
	state   fsm.LaneState
	trigger policy.TriggerID
	guard   policy.Guard
	result  laneAnswer
}

// laneAnswer is the step result a laneOverride gives.
type laneAnswer struct {
	Next    fsm.LaneState
	Outputs policy.Outputs
	Verdict policy.Verdict
}

func (o laneOverride) Step(s policy.StateID, t policy.TriggerID, f policy.Facts) policy.Result {
	if s == policy.StateID(o.state) && t == policy.TriggerID(o.trigger) && o.guard.Holds(f) {
		r := policy.Result{Next: policy.StateID(o.result.Next), Outputs: policy.Outputs(o.result.Outputs), Verdict: o.result.Verdict}
		if r.Verdict != policy.Fired {
			r.Next = s
		}
		return r
	}
	return o.Policy.Step(s, t, f)
}

// laneFacts is a guard that holds when the facts in want hold and those in
// mask&^want do not.
func laneFacts(mask, want policy.Facts) policy.Guard {
	return policy.Guard{Mask: policy.Facts(mask), Want: policy.Facts(want)}
}

// TestLaneWorldNamesWhatAPolicyGetsWrong breaks one answer of the shipped
// policy at a time and requires the property and the reason that name the
// breakage; these are the checks of the runtime and of Wake's answers that
// the mutations leave out.
func TestLaneWorldNamesWhatAPolicyGetsWrong(t *testing.T) {
	const (
		slot, room = policy.LaneFactSlotFree, policy.LaneFactQueueRoom
		fired      = policy.Fired
	)
	for _, c := range []struct {
		name      string
		o         laneOverride
		invariant string
		reason    string
	}{
		{"timeout rejected", laneOverride{state: fsm.LaneRunning, trigger: policy.LaneTimeout, result: laneAnswer{Verdict: policy.Rejected}},
			laneInvRuntime, "refused Timeout at k0 in state Running"},
		{"wake ignored", laneOverride{state: fsm.LaneIdle, trigger: policy.LaneWake, result: laneAnswer{Verdict: policy.Ignored}},
			laneInvRuntime, "gave no single answer"},
		{"two answers", laneOverride{state: fsm.LaneIdle, trigger: policy.LaneWake, guard: laneFacts(slot, slot),
			result: laneAnswer{fsm.LaneRunning, policy.LaneOutputStart | policy.LaneOutputStarted | policy.LaneOutputQueued, fired}},
			laneInvRuntime, "gave no single answer"},
		{"answer outside wake", laneOverride{state: fsm.LaneRunning, trigger: policy.LaneActivationEnded,
			result: laneAnswer{fsm.LaneIdle, policy.LaneOutputReleaseSlot | policy.LaneOutputForget | policy.LaneOutputStarted, fired}},
			laneInvRuntime, "ActivationEnded at k0 output a Wake answer"},
		{"dequeue unqueued", laneOverride{state: fsm.LaneRunning, trigger: policy.LaneCancel,
			result: laneAnswer{fsm.LaneCancelling, policy.LaneOutputDequeue | policy.LaneOutputInterrupt, fired}},
			laneInvRuntime, "dequeue at k0, which is not in the queue"},
		{"enqueue queued", laneOverride{state: fsm.LaneWaiting, trigger: policy.LaneWake,
			result: laneAnswer{fsm.LaneWaiting, policy.LaneOutputEnqueue | policy.LaneOutputCoalesced, fired}},
			laneInvRuntime, "which is in the queue already"},
		{"reserve twice", laneOverride{state: fsm.LaneRunningOwed, trigger: policy.LaneWake,
			result: laneAnswer{fsm.LaneRunningOwed, policy.LaneOutputReserve | policy.LaneOutputCoalesced, fired}},
			laneInvRuntime, "reserve at k0, which holds a reserved place already"},
		{"unreserve none", laneOverride{state: fsm.LaneRunning, trigger: policy.LaneCancel,
			result: laneAnswer{fsm.LaneCancelling, policy.LaneOutputUnreserve | policy.LaneOutputInterrupt, fired}},
			laneInvRuntime, "unreserve at k0, which holds no reserved place"},
		{"release none", laneOverride{state: fsm.LaneIdle, trigger: policy.LaneWake, guard: laneFacts(slot|room, 0),
			result: laneAnswer{fsm.LaneIdle, policy.LaneOutputReleaseSlot | policy.LaneOutputQueueFull | policy.LaneOutputForget, fired}},
			laneInvRuntime, "releaseSlot at k2, which holds no slot"},
		{"ErrClosed while open", laneOverride{state: fsm.LaneIdle, trigger: policy.LaneWake, guard: laneFacts(slot|room, room),
			result: laneAnswer{Verdict: policy.Rejected}},
			laneInvAnswer, "returned ErrClosed, but the lanes are open"},
		{"started without start", laneOverride{state: fsm.LaneIdle, trigger: policy.LaneWake, guard: laneFacts(slot, slot),
			result: laneAnswer{fsm.LaneRunning, policy.LaneOutputStarted, fired}},
			laneInvAnswer, "answered started but started no activation"},
		{"queued but started", laneOverride{state: fsm.LaneIdle, trigger: policy.LaneWake, guard: laneFacts(slot, slot),
			result: laneAnswer{fsm.LaneRunning, policy.LaneOutputStart | policy.LaneOutputQueued, fired}},
			laneInvAnswer, "answered queued or coalesced but started an activation"},
		{"queued twice", laneOverride{state: fsm.LaneWaiting, trigger: policy.LaneWake, result: laneAnswer{fsm.LaneWaiting, policy.LaneOutputQueued, fired}},
			laneInvAnswer, "answered queued though k2 owed an activation already"},
		{"full though owed", laneOverride{state: fsm.LaneWaiting, trigger: policy.LaneWake, result: laneAnswer{fsm.LaneWaiting, policy.LaneOutputQueueFull, fired}},
			laneInvAnswer, "answered queueFull though k2 owed an activation already"},
		{"full though room", laneOverride{state: fsm.LaneIdle, trigger: policy.LaneWake, guard: laneFacts(slot|room, room),
			result: laneAnswer{fsm.LaneIdle, policy.LaneOutputQueueFull | policy.LaneOutputForget, fired}},
			laneInvAnswer, "answered queueFull though the queue had room"},
		{"spurious report", laneOverride{state: fsm.LaneRunning, trigger: policy.LaneTimeout,
			result: laneAnswer{fsm.LaneRunning, policy.LaneOutputInterrupt | policy.LaneOutputReportInterrupted, fired}},
			laneInvReport, "Timeout at k0 output reportInterrupted, but dropped no owed wake"},
		{"close without interrupt", laneOverride{state: fsm.LaneRunning, trigger: policy.LaneClose, result: laneAnswer{fsm.LaneClosed, 0, fired}},
			laneInvInterrupt, "after Close at k0 its activation runs on uninterrupted"},
		{"cancel without interrupt", laneOverride{state: fsm.LaneRunning, trigger: policy.LaneCancel, result: laneAnswer{fsm.LaneCancelling, 0, fired}},
			laneInvInterrupt, "after Cancel at k0 its activation runs on uninterrupted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.o.Policy = fsm.LanePolicy
			r, m := laneCheck(t, c.o, DefaultLaneBounds(), false)
			if r.Verdict != modelcheck.Violated || r.Violation.Property != c.invariant || !strings.Contains(r.Violation.Reason, c.reason) {
				t.Fatalf("%s; want %q with %q\n%s", r.Summary(), c.invariant, c.reason, laneTrace(r, m))
			}
		})
	}
}

// laneStuckWorld is a world after the callers stopped in which k0 waits in
// the queue while every slot is free: nothing will ever grant it one.
func laneStuckWorld() LaneWorld {
	var w LaneWorld
	w.lanes[0] = laneVars{state: policy.StateID(fsm.LaneWaiting), entry: true, queued: true, owed: true}
	w.queue[0], w.qlen = 0, 1
	w.waits[0], w.wlen = 0, 1
	w.quiet = true
	return w
}

func TestLaneWorldOwesWorkWhenStuck(t *testing.T) {
	m, err := LaneModel(fsm.LanePolicy, DefaultLaneBounds())
	if err != nil {
		t.Fatal(err)
	}
	m.Init, m.Canonical = []LaneWorld{laneStuckWorld()}, nil // keep the key names
	r := modelcheck.Check(m, modelcheck.Options{})
	if r.Verdict != modelcheck.Violated || r.Violation.Property != "owes work" || len(r.Violation.Trace) != 1 ||
		!strings.Contains(r.Violation.Reason, "k0 owes a wake that nothing will serve") {
		t.Fatalf("%s\n%s", r.Summary(), laneTrace(r, m))
	}
	const want = "k0 Waiting [owes a wake] | k1 - | k2 -; queue [k0]; slots 0/2, places 1/2; callers stopped"
	if got := m.Format(laneStuckWorld()); got != want {
		t.Errorf("Format:\n got %s\nwant %s", got, want)
	}
}

// TestLaneWorldEveryPropertyCanFail requires a failing case above for
// every invariant of the model and for Owes.
func TestLaneWorldEveryPropertyCanFail(t *testing.T) {
	m, err := LaneModel(fsm.LanePolicy, DefaultLaneBounds())
	if err != nil {
		t.Fatal(err)
	}
	caught := map[string]bool{"owes work": true} // TestLaneWorldOwesWorkWhenStuck
	for _, c := range laneMutations {
		caught[c.invariant] = true
	}
	for _, inv := range m.Invariants {
		if !caught[inv.Name] {
			t.Errorf("no mutation breaks %q", inv.Name)
		}
		delete(caught, inv.Name)
	}
	delete(caught, "owes work")
	for name := range caught {
		t.Errorf("laneMutations names %q, which the model does not check", name)
	}
}

func TestLaneModelRejectsBadArguments(t *testing.T) {
	good := DefaultLaneBounds()
	for _, c := range []struct {
		p     policy.Policy
		b     LaneBounds
		field string
	}{
		{nil, good, "Policy"},
		{fsm.TurnPolicy, good, "Policy"},
		{fsm.LanePolicy, LaneBounds{Keys: 0, MaxConcurrent: 2, MaxQueued: 2}, "Keys"},
		{fsm.LanePolicy, LaneBounds{Keys: LaneMaxKeys + 1, MaxConcurrent: 2, MaxQueued: 2}, "Keys"},
		{fsm.LanePolicy, LaneBounds{Keys: 3, MaxConcurrent: 0, MaxQueued: 2}, "MaxConcurrent"},
		{fsm.LanePolicy, LaneBounds{Keys: 3, MaxConcurrent: 256, MaxQueued: 2}, "MaxConcurrent"},
		{fsm.LanePolicy, LaneBounds{Keys: 3, MaxConcurrent: 2, MaxQueued: -1}, "MaxQueued"},
		{fsm.LanePolicy, LaneBounds{Keys: 3, MaxConcurrent: 2, MaxQueued: 256}, "MaxQueued"},
	} {
		_, err := LaneModel(c.p, c.b)
		var me *ModelError
		if !errors.As(err, &me) || me.Field != c.field || !strings.Contains(err.Error(), c.field) {
			t.Errorf("LaneModel(%v, %+v) = %v, want a *ModelError on %s", c.p, c.b, err, c.field)
		}
	}
	if _, err := LaneModel(fsm.LanePolicy, LaneBounds{Keys: LaneMaxKeys, MaxConcurrent: 255, MaxQueued: 0}); err != nil {
		t.Errorf("the widest bounds: %v", err)
	}
}

// laneSomeWorlds returns up to n worlds reachable from the initial one.
func laneSomeWorlds(m modelcheck.Model[LaneWorld], n int) []LaneWorld {
	worlds := slices.Clone(m.Init)
	for i := 0; i < len(worlds) && len(worlds) < n; i++ {
		m.Next(worlds[i], func(_ string, w LaneWorld) {
			if len(worlds) < n && !slices.Contains(worlds, w) {
				worlds = append(worlds, w)
			}
		})
	}
	return worlds
}

func TestLaneWorldNextAllocatesNothing(t *testing.T) {
	m, err := LaneModel(fsm.LanePolicy, LaneBounds{Keys: 4, MaxConcurrent: 2, MaxQueued: 2})
	if err != nil {
		t.Fatal(err)
	}
	worlds := laneSomeWorlds(m, 300)
	moves := 0
	sink := func(string, LaneWorld) { moves++ }
	allocs := testing.AllocsPerRun(10, func() {
		for _, w := range worlds {
			m.Next(w, sink)
			m.Canonical(w)
		}
	})
	if allocs != 0 || moves == 0 {
		t.Errorf("Next and Canonical allocate %v times over %d worlds (%d moves)", allocs, len(worlds), moves)
	}
}

// BenchmarkLaneWorld explores the shipped policy's lane world without
// symmetry reduction and reports distinct states per second.
func BenchmarkLaneWorld(b *testing.B) {
	for _, c := range []struct {
		name string
		b    LaneBounds
	}{
		{"default", DefaultLaneBounds()},
		{"5keys", LaneBounds{Keys: 5, MaxConcurrent: 3, MaxQueued: 3}},
	} {
		b.Run(c.name, func(b *testing.B) {
			states := 0
			for b.Loop() {
				r, _ := laneCheck(b, fsm.LanePolicy, c.b, false)
				if r.Verdict != modelcheck.Passed {
					b.Fatal(r.Summary())
				}
				states += r.States
			}
			b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
		})
	}
}
