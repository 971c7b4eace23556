package fsm

import (
	"testing"
	"time"

	"github.com/rivus/collab/policy"
)

// laneStep is one trigger fired with the facts the runtime observed.
type laneStep struct {
	t LaneTrigger
	f LaneFacts
}

// laneCycle is a lane's busy cycle, in the family's vocabulary: a wake
// starts an activation, a second wake owes a follow-up, a third coalesces,
// the activation ends and the follow-up starts at once, and that one ends
// with the lane idle again. checkLaneCycle verifies that every step fires
// and that the cycle returns to the initial state, so it can repeat.
var laneCycle = []laneStep{
	{LaneWake, LaneFactSlotFree | LaneFactQueueRoom | LaneFactQueueEmpty},
	{LaneWake, LaneFactQueueRoom | LaneFactQueueEmpty},
	{LaneWake, LaneFactQueueRoom | LaneFactQueueEmpty},
	{LaneActivationEnded, LaneFactSlotFree | LaneFactQueueRoom | LaneFactQueueEmpty},
	{LaneActivationEnded, LaneFactSlotFree | LaneFactQueueRoom | LaneFactQueueEmpty},
}

func laneInitial() LaneState { return LaneState(LanePolicy.Initial()) }

func checkLaneCycle(tb testing.TB) {
	tb.Helper()
	s := laneInitial()
	for _, st := range laneCycle {
		r := LaneStep(s, st.t, st.f)
		if r.Verdict != policy.Fired {
			tb.Fatalf("%v in %v with facts %v: %v, want fired", st.t, s, st.f, r.Verdict)
		}
		s = r.Next
	}
	if s != laneInitial() {
		tb.Fatalf("the lane cycle ends in %v, not in %v", s, laneInitial())
	}
}

// BenchmarkStep fires the lane cycle through the generated LaneStep and
// through the equivalent stateless machine.
func BenchmarkStep(b *testing.B) {
	checkLaneCycle(b)
	b.Run("generated", benchGenerated)
	b.Run("stateless", benchStateless)
}

// BenchmarkStepRatio runs both sides of BenchmarkStep in this process, b.N
// cycles each, and reports how many times faster the generated Step is, as
// x-faster. (testing.Benchmark cannot run inside a benchmark.)
func BenchmarkStepRatio(b *testing.B) {
	checkLaneCycle(b)
	start := time.Now()
	fireGenerated(b, b.N)
	generated := time.Since(start)
	start = time.Now()
	fireStateless(b, b.N)
	reference := time.Since(start)
	b.ReportMetric(0, "ns/op") // the sum of both sides means nothing
	b.ReportMetric(float64(generated.Nanoseconds())/float64(b.N), "generated-ns/op")
	b.ReportMetric(float64(reference.Nanoseconds())/float64(b.N), "stateless-ns/op")
	b.ReportMetric(float64(reference)/float64(max(generated, 1)), "x-faster")
}

func benchGenerated(b *testing.B) {
	b.ReportAllocs()
	fireGenerated(b, b.N)
}

func benchStateless(b *testing.B) {
	b.ReportAllocs()
	fireStateless(b, b.N)
}

// fireGenerated fires n steps of the lane cycle through LaneStep.
func fireGenerated(b *testing.B, n int) {
	s, k := laneInitial(), 0
	var out LaneOutputs
	for range n {
		st := laneCycle[k]
		r := LaneStep(s, st.t, st.f)
		s, out = r.Next, out|r.Outputs
		if k++; k == len(laneCycle) {
			k = 0
		}
	}
	if out == 0 {
		b.Fatal("no outputs")
	}
}

// fireStateless fires n steps of the lane cycle through the stateless
// machine, which reads the step's facts and emits its outputs.
func fireStateless(b *testing.B, n int) {
	var (
		facts LaneFacts
		out   LaneOutputs
	)
	sm := NewLaneStateless(laneInitial(), func() LaneFacts { return facts }, func(o LaneOutputs) { out |= o })
	k := 0
	for range n {
		st := laneCycle[k]
		facts = st.f
		if err := sm.Fire(st.t); err != nil {
			b.Fatal(err)
		}
		if k++; k == len(laneCycle) {
			k = 0
		}
	}
	if out == 0 {
		b.Fatal("no outputs")
	}
}

// TestStepAllocatesNothing requires every generated Step, called directly
// and through its policy.Policy, to allocate nothing.
func TestStepAllocatesNothing(t *testing.T) {
	checkLaneCycle(t)
	allocs := testing.AllocsPerRun(100, func() {
		s := laneInitial()
		for _, st := range laneCycle {
			s = LaneStep(s, st.t, st.f).Next
		}
	})
	if allocs != 0 {
		t.Errorf("LaneStep allocates %v times per cycle", allocs)
	}
	for _, p := range []policy.Policy{TurnPolicy, LanePolicy, LeasePolicy} {
		table := p.Table()
		allocs := testing.AllocsPerRun(10, func() {
			for s := range table.States {
				for tr := range table.Triggers {
					p.Step(policy.StateID(s), policy.TriggerID(tr), 0)
				}
			}
		})
		if allocs != 0 {
			t.Errorf("%s: Step allocates %v times", p.Name(), allocs)
		}
	}
}
