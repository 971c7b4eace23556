package linearizability

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Stuck is where porcupine's search stopped in the shortest failing
// object of a violation: the longest linearization of a prefix of the
// object's failing segment that the search found, the states that prefix
// leaves, and the operations none of which could come after it. Those
// are the operations left out of the prefix that were called before the
// first of them returned: one of them must come next in any
// linearization, since the first to return comes before every operation
// called after its return. ShortestFailing prints the whole segment;
// these say which of its operations to read first.
type Stuck struct {
	Object ObjectID
	// Placed is how many of the Total operations checked in the segment
	// the prefix holds.
	Placed, Total int
	// Last is the prefix's last operation, when Placed > 0.
	Last Event
	// After describes the states the prefix can leave: the segment's
	// start state when Placed is 0.
	After string
	// Next are the operations that could not come next, in call order.
	Next []Event
	// CutOff says that the search ran out of time: a longer prefix may
	// exist.
	CutOff bool
	// start is the segment's first call: times are printed relative to
	// it, as ShortestFailing prints them.
	start int64
}

// maxNext is how many of Stuck.Next String prints.
const maxNext = 8

// diagnose checks p, a failing segment as failingSegment makes it,
// again, verbosely, within timeout, and returns where porcupine's search
// stopped and what it found, which WriteHTML draws.
func diagnose(p *partition, timeout time.Duration) (*Stuck, *porcupine.LinearizationInfo) {
	m := verboseModel([][]porcupine.Operation{p.ops})
	res, info := porcupine.CheckOperationsVerbose(m, nil, nonZero(timeout))
	s := &Stuck{Object: p.id, Total: len(p.ops) - 1, CutOff: res == porcupine.Unknown} // ops[0] is the opening
	s.start = slices.MinFunc(p.evs, func(a, b *Event) int { return cmp.Compare(a.Call, b.Call) }).Call
	var prefix []int
	if ls := info.PartialLinearizations(); len(ls) > 0 {
		prefix = longest(ls[0])
	}
	if len(prefix) == 0 || prefix[0] != 0 {
		// Every linearization starts with the opening, which ends before
		// the first call: a search cut off before it placed anything
		// still starts from the segment's start state.
		prefix = append([]int{0}, prefix...)
	}
	placed := make([]bool, len(p.ops))
	state := m.Init()
	for _, id := range prefix {
		_, state = m.Step(state, p.ops[id].Input, p.ops[id].Output)
		placed[id] = true
	}
	s.After = describeStates(statesOf(state))
	if last := prefix[len(prefix)-1]; last != 0 {
		s.Placed, s.Last = len(prefix)-1, *p.ops[last].Input.(*input).Event
	}
	s.Next = unplaced(p.ops, placed)
	return s, &info
}

// longest returns the longest of porcupine's partial linearizations, the
// first in the order of their operations among those as long, so that a
// report does not depend on the order porcupine lists them in.
func longest(ls [][]int) []int {
	var best []int
	for _, l := range ls {
		if len(l) > len(best) || len(l) == len(best) && slices.Compare(l, best) < 0 {
			best = l
		}
	}
	return best
}

// statesOf returns the states of the verbose model's state, a set of
// states, in a fixed order.
func statesOf(s any) []state {
	var out []state
	for _, x := range s.([]any) {
		out = append(out, x.(state))
	}
	slices.SortFunc(out, compareStates)
	return out
}

// unplaced returns the events of the operations of ops (after the
// opening) not placed that were called before the first of them
// returned, as porcupine's times have them, in call order.
func unplaced(ops []porcupine.Operation, placed []bool) []Event {
	first := int64(math.MaxInt64)
	for id := 1; id < len(ops); id++ {
		if !placed[id] {
			first = min(first, ops[id].Return)
		}
	}
	var next []Event
	for id := 1; id < len(ops); id++ {
		// porcupine orders a call before a return of the same time.
		if !placed[id] && ops[id].Call <= first {
			next = append(next, *ops[id].Input.(*input).Event)
		}
	}
	slices.SortStableFunc(next, func(a, b Event) int {
		return cmp.Or(cmp.Compare(a.Call, b.Call), cmp.Compare(a.Process, b.Process))
	})
	return next
}

// String describes s for people: a line naming the object and how far
// porcupine got, then a line for each operation that could not come next
// (at most maxNext): its process, call and output, its call and return
// relative to the segment's first call, as ShortestFailing prints them,
// and on the monotonic clock, as the recorded files have them.
func (s *Stuck) String() string {
	var b strings.Builder
	if s.Placed == 0 {
		fmt.Fprintf(&b, "%s: porcupine placed none of the %d operations it checked, from %s", s.Object, s.Total, s.After)
	} else {
		fmt.Fprintf(&b, "%s: porcupine placed %d of the %d operations it checked, the last p%d %s, leaving %s",
			s.Object, s.Placed, s.Total, s.Last.Process, describe(s.Last.Kind, s.Last.Input, s.Last.Output, s.Last.Open), s.After)
	}
	if s.CutOff {
		b.WriteString(" (cut off by the timeout: a longer prefix may exist)")
	}
	b.WriteString("; it could place none of these next:\n")
	for i, e := range s.Next {
		if i == maxNext {
			fmt.Fprintf(&b, "  ... and %d more\n", len(s.Next)-i)
			break
		}
		ret, at := "never returned", "open"
		if !e.Open {
			ret, at = "returned +"+since(s.start, e.Return), fmt.Sprint(e.Return)
		}
		fmt.Fprintf(&b, "  p%d %s; called +%s, %s (monotonic ns %d .. %s)\n",
			e.Process, describe(e.Kind, e.Input, e.Output, e.Open), since(s.start, e.Call), ret, e.Call, at)
	}
	return b.String()
}
