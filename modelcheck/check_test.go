package modelcheck_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/modelcheck"
)

// ring counts modulo n: n worlds in a cycle.
func ring(n int) modelcheck.Model[int] {
	return modelcheck.Model[int]{
		Name: "ring",
		Init: []int{0},
		Next: func(w int, yield func(string, int)) { yield("inc", (w+1)%n) },
	}
}

func TestPassedVisitsEveryWorldOnce(t *testing.T) {
	for _, fp := range []bool{false, true} {
		r := modelcheck.Check(ring(1000), modelcheck.Options{Fingerprint: fp})
		if r.Verdict != modelcheck.Passed || r.States != 1000 || r.Moves != 1000 || r.Depth != 1000 {
			t.Errorf("fingerprint=%v: %s", fp, r.Summary())
		}
	}
}

// procs is two processes that each go idle → trying → critical → idle;
// with guarded false, nothing keeps them apart.
type procs struct{ pc [2]uint8 }

const (
	idle uint8 = iota
	trying
	critical
)

func mutexModel(guarded bool) modelcheck.Model[procs] {
	return modelcheck.Model[procs]{
		Name: "mutex",
		Init: []procs{{}},
		Next: func(w procs, yield func(string, procs)) {
			for i := range w.pc {
				next := w
				switch w.pc[i] {
				case idle:
					next.pc[i] = trying
				case trying:
					if guarded && w.pc[1-i] == critical {
						continue
					}
					next.pc[i] = critical
				case critical:
					next.pc[i] = idle
				}
				yield(fmt.Sprintf("p%d step", i), next)
			}
		},
		Invariants: []modelcheck.Invariant[procs]{{
			Name: "mutual exclusion",
			Check: func(w procs) error {
				if w.pc[0] == critical && w.pc[1] == critical {
					return errors.New("both processes are critical")
				}
				return nil
			},
		}},
	}
}

func TestViolationHasShortestTrace(t *testing.T) {
	for _, fp := range []bool{false, true} {
		r := modelcheck.Check(mutexModel(false), modelcheck.Options{Fingerprint: fp})
		if r.Verdict != modelcheck.Violated {
			t.Fatalf("fingerprint=%v: %s", fp, r.Summary())
		}
		v := r.Violation
		// init, then two steps per process to reach critical.
		if v.Property != "mutual exclusion" || len(v.Trace) != 5 {
			t.Fatalf("violation %q with %d steps: %+v", v.Property, len(v.Trace), v.Trace)
		}
		if v.Trace[0].Label != "init" || v.Trace[4].World != (procs{[2]uint8{critical, critical}}) {
			t.Fatalf("trace does not run from init to the bad world: %+v", v.Trace)
		}
		var out bytes.Buffer
		if err := v.WriteTrace(&out, nil); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "  4. p") || !strings.Contains(out.String(), "both processes are critical") {
			t.Errorf("trace text:\n%s", out.String())
		}
	}
	if r := modelcheck.Check(mutexModel(true), modelcheck.Options{}); r.Verdict != modelcheck.Passed {
		t.Fatalf("guarded mutex: %s", r.Summary())
	}
}

func TestMoveInvariant(t *testing.T) {
	m := ring(5)
	m.Moves = []modelcheck.MoveInvariant[int]{{
		Name: "never decreases",
		Check: func(from int, _ string, to int) error {
			if to < from {
				return fmt.Errorf("%d -> %d", from, to)
			}
			return nil
		},
	}}
	r := modelcheck.Check(m, modelcheck.Options{})
	if r.Verdict != modelcheck.Violated || r.Violation.Property != "never decreases" {
		t.Fatalf("%s", r.Summary())
	}
	tr := r.Violation.Trace
	if len(tr) != 6 || tr[4].World != 4 || tr[5].World != 0 {
		t.Fatalf("trace %+v, want 0..4 then the move to 0", tr)
	}
}

func TestOwedWorkWithoutMovesIsAViolation(t *testing.T) {
	m := modelcheck.Model[int]{
		Name: "stuck",
		Init: []int{0},
		Next: func(w int, yield func(string, int)) {
			if w < 3 {
				yield("step", w+1)
			}
		},
		Owes: func(w int) string {
			if w == 3 {
				return "a wake is queued while a slot is free"
			}
			return ""
		},
	}
	r := modelcheck.Check(m, modelcheck.Options{})
	if r.Verdict != modelcheck.Violated || r.Violation.Property != "owes work" || len(r.Violation.Trace) != 4 {
		t.Fatalf("%s", r.Summary())
	}
	if !strings.Contains(r.Violation.Reason, "a wake is queued") {
		t.Errorf("reason %q", r.Violation.Reason)
	}
	m.Owes = func(int) string { return "" }
	if r := modelcheck.Check(m, modelcheck.Options{}); r.Verdict != modelcheck.Passed {
		t.Fatalf("owing nothing: %s", r.Summary())
	}
}

// unbounded never runs out of worlds.
var unbounded = modelcheck.Model[int]{
	Name: "unbounded",
	Init: []int{0},
	Next: func(w int, yield func(string, int)) { yield("inc", w+1) },
}

func TestLimitsAreIncompleteNeverPassed(t *testing.T) {
	r := modelcheck.Check(unbounded, modelcheck.Options{MaxStates: 100})
	if r.Verdict != modelcheck.Incomplete || r.States != 100 || !strings.Contains(r.Stopped, "state limit") {
		t.Fatalf("%s", r.Summary())
	}
	r = modelcheck.Check(unbounded, modelcheck.Options{Timeout: time.Millisecond})
	if r.Verdict != modelcheck.Incomplete || !strings.Contains(r.Stopped, "time limit") {
		t.Fatalf("%s", r.Summary())
	}
	// A space of exactly MaxStates worlds is complete.
	if r := modelcheck.Check(ring(100), modelcheck.Options{MaxStates: 100}); r.Verdict != modelcheck.Passed {
		t.Fatalf("exact fit: %s", r.Summary())
	}
}

func TestProgressLines(t *testing.T) {
	var out bytes.Buffer
	modelcheck.Check(unbounded, modelcheck.Options{MaxStates: 100_000, Progress: &out, ProgressEvery: time.Nanosecond})
	if !strings.Contains(out.String(), "unbounded: ") || !strings.Contains(out.String(), "states/s, depth") {
		t.Fatalf("progress output %q", out.String())
	}
}

func TestCanonicalMergesSymmetricWorlds(t *testing.T) {
	sorted := func(w procs) procs {
		if w.pc[0] > w.pc[1] {
			w.pc[0], w.pc[1] = w.pc[1], w.pc[0]
		}
		return w
	}
	full := modelcheck.Check(mutexModel(true), modelcheck.Options{})
	m := mutexModel(true)
	m.Canonical = sorted
	reduced := modelcheck.Check(m, modelcheck.Options{})
	if reduced.Verdict != modelcheck.Passed || reduced.States >= full.States {
		t.Fatalf("full %s; reduced %s", full.Summary(), reduced.Summary())
	}
	bad := mutexModel(false)
	bad.Canonical = sorted
	if r := modelcheck.Check(bad, modelcheck.Options{}); r.Verdict != modelcheck.Violated || len(r.Violation.Trace) != 5 {
		t.Fatalf("reduced broken mutex: %s", r.Summary())
	}
}

func TestVerdictString(t *testing.T) {
	for v, want := range map[modelcheck.Verdict]string{modelcheck.Passed: "passed", modelcheck.Violated: "violated", modelcheck.Incomplete: "incomplete", 9: "Verdict(9)"} {
		if v.String() != want {
			t.Errorf("%d.String() = %q, want %q", v, v.String(), want)
		}
	}
}
