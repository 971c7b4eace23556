package linearizability

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
)

// everyCut makes the check cut histories at every moment no operation
// spans, for the rest of the test.
func everyCut(t *testing.T) {
	saved := minSegment
	minSegment = 1
	t.Cleanup(func() { minSegment = saved })
}

// TestCutOnlyWhereNothingSpans: segments begin only where every earlier
// operation has returned, hold at least minSegment operations but the
// last, and an open-ended operation keeps the rest of the history whole.
func TestCutOnlyWhereNothingSpans(t *testing.T) {
	ops := func(spans ...[2]int64) []porcupine.Operation {
		var out []porcupine.Operation
		for _, s := range spans {
			out = append(out, porcupine.Operation{Call: s[0], Return: s[1]})
		}
		return out
	}
	sizes := func(segs []segment) []int {
		var n []int
		for _, s := range segs {
			n = append(n, len(s.ops))
		}
		return n
	}
	everyCut(t)
	for _, tt := range []struct {
		name string
		ops  []porcupine.Operation
		min  int
		want []int
	}{
		{"apart", ops([2]int64{0, 1}, [2]int64{2, 3}, [2]int64{4, 5}), 1, []int{1, 1, 1}},
		{"overlapping", ops([2]int64{0, 10}, [2]int64{2, 3}, [2]int64{5, 12}, [2]int64{13, 14}), 1, []int{3, 1}},
		{"touching is spanning", ops([2]int64{0, 10}, [2]int64{10, 11}, [2]int64{12, 13}), 1, []int{2, 1}},
		{"at least min", ops([2]int64{0, 1}, [2]int64{2, 3}, [2]int64{4, 5}, [2]int64{6, 7}, [2]int64{8, 9}), 2, []int{2, 2, 1}},
		{"open end", ops([2]int64{0, 1}, [2]int64{2, math.MaxInt64}, [2]int64{4, 5}, [2]int64{6, 7}), 1, []int{1, 3}},
		{"call order", ops([2]int64{4, 5}, [2]int64{0, 1}), 1, []int{1, 1}},
		{"none", nil, 1, nil},
		{"no minimum", ops([2]int64{0, 1}, [2]int64{2, 3}), 0, []int{1, 1}},
	} {
		minSegment = tt.min
		if got := sizes(cut(tt.ops)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: segments of %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestChainCarriesEveryEndState: two concurrent accepted writes leave
// either value, and the next segment may read either; a value neither
// leaves is a violation found in the later segment, named with the
// states it was checked from.
func TestChainCarriesEveryEndState(t *testing.T) {
	everyCut(t)
	first := []Event{
		op(0, "k", Acquire, none, gen(1), 0, 10),
		op(0, "k", Write, wr(1, "a"), ok, 20, 40),
		op(1, "k", Write, wr(1, "b"), ok, 25, 45),
	}
	for _, tt := range []struct {
		read string
		want Verdict
	}{{"a", Linearizable}, {"b", Linearizable}, {"c", Violation}} {
		h := hist(append(slices.Clone(first), op(2, "k", Read, none, val(tt.read), 50, 60))...)
		r := check(t, h)
		if r.Verdict != tt.want || r.Segments != 3 {
			t.Fatalf("read %q: %v in %d segments, want %v in 3", tt.read, r.Verdict, r.Segments, tt.want)
		}
		if tt.want == Violation {
			got := r.ShortestFailing()
			if !strings.Contains(got, `1 operations, not linearizable from gen 1 held, value "a", or gen 1 held, value "b"`) ||
				!strings.Contains(got, `read -> "c"`) {
				t.Errorf("shortest failing:\n%s", got)
			}
		}
	}
}

// TestChainAcrossCuts: a violation whose operations lie in different
// segments is found; the uncertain outcomes a Local history bounds carry
// both states across a cut.
func TestChainAcrossCuts(t *testing.T) {
	everyCut(t)
	for _, tt := range []struct {
		name string
		h    History
		want Verdict
	}{
		{"generation reused across a cut", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(1, "k", Acquire, none, gen(1), 20, 30),
		), Violation},
		{"unknown write, then its value", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(0, "k", Write, wr(1, "x"), unknown, 20, 30),
			op(1, "k", Read, none, val("x"), 40, 50),
		), Linearizable},
		{"unknown write, then the old value", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(0, "k", Write, wr(1, "x"), unknown, 20, 30),
			op(1, "k", Read, none, val(""), 40, 50),
		), Linearizable},
		{"unknown write, then another value", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(0, "k", Write, wr(1, "x"), unknown, 20, 30),
			op(1, "k", Read, none, val("y"), 40, 50),
		), Violation},
	} {
		h := tt.h
		h.Local = true
		if r := check(t, h); r.Verdict != tt.want || r.Segments < 2 {
			t.Errorf("%s: %v in %d segments, want %v in more than one", tt.name, r.Verdict, r.Segments, tt.want)
		}
	}
}

// TestModelsCutEverywhere runs the model and bound tables again with a
// cut wherever nothing spans: the verdicts must not change.
func TestModelsCutEverywhere(t *testing.T) {
	everyCut(t)
	t.Run("models", TestModels)
	t.Run("bounds", TestLocalBounds)
	t.Run("uncertain", TestUncertainBothOutcomes)
	t.Run("generated", TestGeneratedHistory)
	t.Run("campaign", TestGeneratedCampaign)
}
