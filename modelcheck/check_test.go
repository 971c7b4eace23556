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

// TestNegativeOptionsPanicNamingTheField: a negative limit is the
// program's mistake; Check panics before it explores anything.
func TestNegativeOptionsPanicNamingTheField(t *testing.T) {
	tests := []struct {
		opts  modelcheck.Options
		field string
	}{
		{modelcheck.Options{MaxStates: -3}, "Options.MaxStates is -3"},
		{modelcheck.Options{Timeout: -time.Second}, "Options.Timeout is -1s"},
		{modelcheck.Options{Progress: &bytes.Buffer{}, ProgressEvery: -time.Millisecond}, "Options.ProgressEvery is -1ms"},
		{modelcheck.Options{ProgressEvery: -1}, "Options.ProgressEvery is -1ns"},
	}
	for _, tc := range tests {
		t.Run(tc.field, func(t *testing.T) {
			explored := false
			m := ring(10) // finite, so that a Check that does not panic returns
			m.Next = func(w int, yield func(string, int)) { explored = true; yield("inc", (w+1)%10) }
			msg := func() (msg string) {
				defer func() {
					if r := recover(); r != nil {
						msg = fmt.Sprint(r)
					}
				}()
				modelcheck.Check(m, tc.opts)
				return "no panic"
			}()
			if !strings.Contains(msg, tc.field) || explored {
				t.Fatalf("Check: %q (explored: %v); want a panic naming %q before exploring", msg, explored, tc.field)
			}
		})
	}
	// Zero is no limit (or the default), never a panic.
	if r := modelcheck.Check(ring(10), modelcheck.Options{}); r.Verdict != modelcheck.Passed {
		t.Fatal(r.Summary())
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

// torus is an n×n×n torus walked one step at a time, wider than a batch
// of moves; bad, if set, breaks an invariant.
func torus(n uint8, bad func([3]uint8) bool) modelcheck.Model[[3]uint8] {
	m := modelcheck.Model[[3]uint8]{
		Name: "torus",
		Init: [][3]uint8{{}},
		Next: func(w [3]uint8, yield func(string, [3]uint8)) {
			for d := range w {
				up, down := w, w
				up[d] = (w[d] + 1) % n
				down[d] = (w[d] + n - 1) % n
				yield("up", up)
				yield("down", down)
			}
			yield("stay", w)
		},
	}
	if bad != nil {
		m.Invariants = []modelcheck.Invariant[[3]uint8]{{Name: "good", Check: func(w [3]uint8) error {
			if bad(w) {
				return errors.New("bad world")
			}
			return nil
		}}}
	}
	return m
}

// reference is a plain breadth-first search with a Go map: the number of
// worlds, the depth and each world's distance from the initial ones.
func reference[W comparable](m modelcheck.Model[W]) (dist map[W]int, depth, moves int) {
	dist = map[W]int{}
	var level []W
	for _, w := range m.Init {
		if _, ok := dist[w]; !ok {
			dist[w] = 0
			level = append(level, w)
		}
	}
	for ; len(level) > 0; depth++ {
		var next []W
		for _, w := range level {
			m.Next(w, func(_ string, to W) {
				moves++
				if _, ok := dist[to]; !ok {
					dist[to] = depth + 1
					next = append(next, to)
				}
			})
		}
		level = next
	}
	return dist, depth, moves
}

func TestMatchesReferenceSearch(t *testing.T) {
	dist, depth, moves := reference(torus(23, nil))
	isBad := func(w [3]uint8) bool { return w == [3]uint8{5, 17, 9} }
	for _, fp := range []bool{false, true} {
		r := modelcheck.Check(torus(23, nil), modelcheck.Options{Fingerprint: fp})
		if r.Verdict != modelcheck.Passed || r.States != len(dist) || r.Depth != depth || r.Moves != moves {
			t.Errorf("fingerprint=%v: %s; want %d states, %d moves, depth %d", fp, r.Summary(), len(dist), moves, depth)
		}
		r = modelcheck.Check(torus(23, isBad), modelcheck.Options{Fingerprint: fp})
		if r.Verdict != modelcheck.Violated {
			t.Fatalf("fingerprint=%v: %s", fp, r.Summary())
		}
		tr := r.Violation.Trace
		if last := tr[len(tr)-1].World; !isBad(last) || len(tr)-1 != dist[last] {
			t.Errorf("fingerprint=%v: trace of %d moves to %v, want %d moves to the bad world", fp, len(tr)-1, last, dist[[3]uint8{5, 17, 9}])
		}
	}
}

// Worlds that are not plain memory (here strings) are hashed by
// maphash.Comparable and compared by ==.
func TestWorldsThatAreNotPlainMemory(t *testing.T) {
	m := modelcheck.Model[string]{
		Name: "words",
		Init: []string{"", ""},
		Next: func(w string, yield func(string, string)) {
			if len(w) < 8 {
				yield("a", w+"a")
				yield("b", w+"b")
			}
		},
	}
	for _, fp := range []bool{false, true} {
		r := modelcheck.Check(m, modelcheck.Options{Fingerprint: fp})
		if r.Verdict != modelcheck.Passed || r.States != 1<<9-1 || r.Depth != 9 {
			t.Errorf("fingerprint=%v: %s, want %d states, depth 9", fp, r.Summary(), 1<<9-1)
		}
	}
}

// A move invariant sees, and a violation reports, the world a move yields,
// not its canonical form.
func TestMoveInvariantSeesWorldBeforeCanonical(t *testing.T) {
	m := modelcheck.Model[int]{
		Name: "counter",
		Init: []int{0},
		Next: func(w int, yield func(string, int)) {
			if w < 4 {
				yield("up", w+1)
			}
		},
		Canonical: func(w int) int { return w % 3 },
		Moves: []modelcheck.MoveInvariant[int]{{Name: "below 3", Check: func(_ int, _ string, to int) error {
			if to >= 3 {
				return errors.New("reached 3")
			}
			return nil
		}}},
	}
	r := modelcheck.Check(m, modelcheck.Options{})
	if r.Verdict != modelcheck.Violated {
		t.Fatalf("want a violation: %s", r.Summary())
	}
	if last := r.Violation.Trace[len(r.Violation.Trace)-1]; last.World != 3 {
		t.Fatalf("the violating move yields %d, want 3 (its canonical form is 0)", last.World)
	}
}

// The zero world is reached last here: it must be visited like any other,
// although the checker's recent set (zeroed memory) could take it for one
// it has seen.
func TestZeroWorldReachedLastIsVisited(t *testing.T) {
	m := modelcheck.Model[[2]uint64]{
		Name: "ring from one",
		Init: [][2]uint64{{1, 0}},
		Next: func(w [2]uint64, yield func(string, [2]uint64)) {
			yield("inc", [2]uint64{(w[0] + 1) % 100, 0})
		},
	}
	for _, fp := range []bool{false, true} {
		r := modelcheck.Check(m, modelcheck.Options{Fingerprint: fp})
		if r.Verdict != modelcheck.Passed || r.States != 100 || r.Depth != 100 {
			t.Errorf("fingerprint=%v: %s", fp, r.Summary())
		}
	}
}

// orderWorld: 0 moves to 1 and to 2; 1 moves to 3; 2 moves to 4.
func orderNext(w [2]uint64, yield func(string, [2]uint64)) {
	switch w[0] {
	case 0:
		yield("a", [2]uint64{1})
		yield("b", [2]uint64{2})
	case 1:
		yield("c", [2]uint64{3})
	case 2:
		yield("d", [2]uint64{4})
	}
}

func isWorld(n uint64) func([2]uint64) error {
	return func(w [2]uint64) error {
		if w[0] == n {
			return fmt.Errorf("world %d", n)
		}
		return nil
	}
}

// The checker batches moves, yet stops where probing each move as Next
// yields it would: the first violation or limit in Next's order wins,
// and Moves counts the moves up to it.
func TestStopsInNextOrder(t *testing.T) {
	notTo4 := modelcheck.MoveInvariant[[2]uint64]{Name: "never to 4", Check: func(_ [2]uint64, _ string, to [2]uint64) error { return isWorld(4)(to) }}
	not3 := modelcheck.Invariant[[2]uint64]{Name: "not 3", Check: isWorld(3)}
	owes2 := func(w [2]uint64) string {
		if w[0] == 2 {
			return "a debt"
		}
		return ""
	}
	type outcome struct {
		verdict              modelcheck.Verdict
		states, moves, depth int
		property             string
	}
	for _, c := range []struct {
		name string
		m    modelcheck.Model[[2]uint64]
		opts modelcheck.Options
		want outcome
	}{
		{"a world invariant before a move invariant",
			modelcheck.Model[[2]uint64]{Invariants: []modelcheck.Invariant[[2]uint64]{not3}, Moves: []modelcheck.MoveInvariant[[2]uint64]{notTo4}},
			modelcheck.Options{}, outcome{modelcheck.Violated, 4, 3, 2, "not 3"}},
		{"the state limit before a move invariant",
			modelcheck.Model[[2]uint64]{Moves: []modelcheck.MoveInvariant[[2]uint64]{notTo4}},
			modelcheck.Options{MaxStates: 3}, outcome{modelcheck.Incomplete, 3, 3, 2, ""}},
		{"a world invariant before owed work",
			modelcheck.Model[[2]uint64]{Invariants: []modelcheck.Invariant[[2]uint64]{not3}, Owes: owes2},
			modelcheck.Options{}, outcome{modelcheck.Violated, 4, 3, 2, "not 3"}},
		{"moves after a violation are not counted",
			modelcheck.Model[[2]uint64]{Invariants: []modelcheck.Invariant[[2]uint64]{{Name: "not 1", Check: isWorld(1)}}},
			modelcheck.Options{}, outcome{modelcheck.Violated, 2, 1, 1, "not 1"}},
	} {
		c.m.Name, c.m.Init, c.m.Next = "order", [][2]uint64{{0}}, orderNext
		if c.m.Owes != nil { // world 2 then has no moves
			c.m.Next = func(w [2]uint64, yield func(string, [2]uint64)) {
				if w[0] != 2 {
					orderNext(w, yield)
				}
			}
		}
		r := modelcheck.Check(c.m, c.opts)
		got := outcome{r.Verdict, r.States, r.Moves, r.Depth, ""}
		if r.Violation != nil {
			got.property = r.Violation.Property
		}
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// Worlds of size zero are one world.
func TestZeroSizedWorld(t *testing.T) {
	m := modelcheck.Model[struct{}]{Name: "unit", Init: []struct{}{{}},
		Next: func(w struct{}, yield func(string, struct{})) { yield("stay", w) }}
	if r := modelcheck.Check(m, modelcheck.Options{}); r.Verdict != modelcheck.Passed || r.States != 1 || r.Moves != 1 {
		t.Fatal(r.Summary())
	}
}
