package worldmodel

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/rivus/collab/gen"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// specPolicy parses, validates and compiles the spec at path (or src, if
// not nil), the way `collab check` does with a user's spec.
func specPolicy(tb testing.TB, path string, src []byte) policy.Policy {
	tb.Helper()
	if src == nil {
		var err error
		if src, err = os.ReadFile(path); err != nil {
			tb.Fatal(err)
		}
	}
	spec, err := gen.Parse(filepath.Base(path), src)
	if err != nil {
		tb.Fatalf("parse %s: %v", path, err)
	}
	table, err := gen.Validate(spec)
	if err != nil {
		tb.Fatalf("validate %s: %v", path, err)
	}
	return policy.Compile(table)
}

// stepRecorder is a policy that records which rows of its table fire (by
// spec line) and which ignored pairs are hit, so that a test can require
// a world to reach all of its spec.
type stepRecorder struct {
	policy.Policy
	fired   map[int]bool
	ignored map[policy.Pair]bool
}

func newStepRecorder(p policy.Policy) *stepRecorder {
	return &stepRecorder{Policy: p, fired: map[int]bool{}, ignored: map[policy.Pair]bool{}}
}

func (r *stepRecorder) Step(s policy.StateID, tr policy.TriggerID, f policy.Facts) policy.Result {
	res := r.Policy.Step(s, tr, f)
	switch res.Verdict {
	case policy.Fired:
		for _, row := range r.Table().Rows {
			if row.From == s && row.Trigger == tr && row.Guard.Holds(f) {
				r.fired[row.Line] = true
			}
		}
	case policy.Ignored:
		r.ignored[policy.Pair{State: s, Trigger: tr}] = true
	}
	return res
}

// wantStory checks that a counterexample reads as one story: each step's
// world is a move of the world before it, the one its label names, with no
// renaming between steps (symmetry reduction's canonical worlds do not
// leak into the trace), and the reason is true of the last world.
func wantStory[W comparable](t *testing.T, m modelcheck.Model[W], v *modelcheck.Violation[W]) {
	t.Helper()
	if !slices.Contains(m.Init, v.Trace[0].World) {
		t.Errorf("the trace starts at %v, not at an initial world", v.Trace[0].World)
	}
	for i := 1; i < len(v.Trace); i++ {
		step, found := v.Trace[i], false
		m.Next(v.Trace[i-1].World, func(label string, next W) {
			found = found || label == step.Label && next == step.World
		})
		if !found {
			t.Fatalf("step %d, %q, is not a move of step %d's world as it is shown", i, step.Label, i-1)
		}
	}
	for _, inv := range m.Invariants {
		if inv.Name == v.Property {
			if err := inv.Check(v.Trace[len(v.Trace)-1].World); err == nil || err.Error() != v.Reason {
				t.Errorf("the last world's %q says %v, the violation %q", v.Property, err, v.Reason)
			}
		}
	}
}

// wantParallelSame checks that a parallel search of m finds exactly what
// the sequential search found (r): states, moves, depth, verdict, trace.
func wantParallelSame[W comparable](t *testing.T, m modelcheck.Model[W], opts modelcheck.Options, r modelcheck.Result[W]) {
	t.Helper()
	opts.Workers = 2
	got := modelcheck.Check(m, opts)
	got.Elapsed, r.Elapsed = 0, 0
	if !reflect.DeepEqual(got, r) {
		t.Errorf("2 workers: %s, want %s as one worker found", got.Summary(), r.Summary())
	}
}
