package linearizability

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// The check in segments.
//
// porcupine remembers, for the object it checks, every set of operations
// it has linearized with the state they lead to, each set a bitset over
// all the object's operations: its memory and time grow with the square
// of a long history. Check therefore cuts each object's history where no
// operation spans the cut (every operation called before it has returned,
// at its return as reduce sets it) and checks the pieces, segments, one
// after another. Every linearization places the operations before a cut
// before those after it, so the history is linearizable if and only if
// the operations after the cut are, from some state that a linearization
// of those before it can leave. Each segment is checked from every state
// the one before it can leave (its starts), and yields the states it can
// leave in turn:
//
//   - porcupine checks the segment after an opening operation, which takes
//     the initial state to the start states (all of them at once in a
//     Local history's model, which checks sets of states; one at a time
//     otherwise), and before a closing
//     operation, called after the segment's last return and so linearized
//     only after all of its operations, which notes the state it is tried
//     in and refuses. porcupine then tries every linearization of the
//     segment, and notes every state one can leave: it drops only a branch
//     that reaches a set of operations and a state it reached before,
//     from which the same states were noted already.
//   - The last segment is checked as porcupine checks a history.
//
// A segment that no start state linearizes is a violation. Cuts need
// operations of known end: after an acquisition of unknown outcome that
// no bound ends (a server store's), the rest of the object's history is
// one segment.

// minSegment is the fewest operations a segment has, unless the history
// ends first: each segment costs porcupine calls of their own.
var minSegment = 64

// segment is a piece of an object's history that no operation spans.
type segment struct {
	ops    []porcupine.Operation // in call order
	starts []state               // the states it is checked from
	// via maps each state the segment can leave to the start states it
	// was checked from when it left it (see chain); unset for the last
	// segment.
	via map[state][]state
	// from is, for the last segment, start states it is linearizable
	// from.
	from []state
}

// cut splits an object's operations into segments at moments no
// operation spans, each of at least minSegment operations but the last;
// none when there are no operations.
func cut(ops []porcupine.Operation) []segment {
	ops = slices.Clone(ops)
	slices.SortStableFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	var segs []segment
	start, lastReturn := 0, int64(math.MinInt64) // the latest return before ops[i]
	least := max(minSegment, 1)
	for i, op := range ops {
		if i-start >= least && lastReturn < op.Call {
			segs = append(segs, segment{ops: ops[start:i:i]})
			start = i
		}
		lastReturn = max(lastReturn, op.Return)
	}
	if start < len(ops) {
		segs = append(segs, segment{ops: ops[start:]})
	}
	return segs
}

// opening is the input of the operation that takes the initial state to
// a segment's start states: one of them, or (in a Local history's model,
// which checks sets of states) all of them.
type opening struct{ starts []state }

// closing is the input of the operation after a segment: its step notes
// the state and refuses.
type closing struct{ ends map[state]struct{} }

// framed returns a segment's operations after an opening to starts, and,
// when ends is not nil, before a closing that notes in ends the states it
// is tried in, both of client client. The opening ends before the first
// call; the closing is called after the last return.
func framed(ops []porcupine.Operation, client int, starts []state, ends map[state]struct{}) []porcupine.Operation {
	first, last := span(ops)
	out := make([]porcupine.Operation, 0, len(ops)+2)
	out = append(out, porcupine.Operation{ClientId: client, Input: &opening{starts}, Call: first - 2, Return: first - 1})
	out = append(out, ops...)
	if ends != nil {
		out = append(out, porcupine.Operation{ClientId: client, Input: &closing{ends}, Call: last + 1, Return: last + 2})
	}
	return out
}

// span returns the first call and the last return of a segment's
// operations, which are in call order.
func span(ops []porcupine.Operation) (first, last int64) {
	first, last = ops[0].Call, ops[0].Return
	for _, op := range ops {
		last = max(last, op.Return)
	}
	return first, last
}

// chain checks an object's segments in order, each from the states the
// one before can leave, until the deadline. It returns the verdict and,
// after a violation, the index of the segment that failed. A Local
// history's model checks sets of states: it takes all of a segment's
// start states at once; the other model one at a time.
func chain(m porcupine.Model, local bool, segs []segment, client int, deadline time.Time) (Verdict, int) {
	starts := []state{{}}
	for i := range segs {
		sg := &segs[i]
		sg.starts = starts
		last := i == len(segs)-1
		if !last {
			sg.via = map[state][]state{}
		}
		var next []state
		for _, group := range startGroups(starts, local) {
			left := time.Until(deadline)
			if left <= 0 {
				return Inconclusive, i
			}
			if last {
				switch porcupine.CheckOperationsTimeout(m, framed(sg.ops, client, group, nil), left) {
				case porcupine.Ok:
					sg.from = group
					return Linearizable, i
				case porcupine.Unknown:
					return Inconclusive, i
				}
				continue
			}
			ends := map[state]struct{}{}
			if porcupine.CheckOperationsTimeout(m, framed(sg.ops, client, group, ends), left) == porcupine.Unknown {
				return Inconclusive, i
			}
			for e := range ends {
				if _, seen := sg.via[e]; !seen {
					sg.via[e] = group
					next = append(next, e)
				}
			}
		}
		if len(next) == 0 && !last {
			return Violation, i
		}
		slices.SortFunc(next, compareStates)
		starts = next
	}
	if len(segs) == 0 {
		return Linearizable, 0
	}
	return Violation, len(segs) - 1
}

// startGroups splits a segment's start states into the groups it is
// checked from: all together where the model checks sets of states, one
// by one where it does not.
func startGroups(starts []state, local bool) [][]state {
	if local {
		return [][]state{starts}
	}
	groups := make([][]state, len(starts))
	for i := range starts {
		groups[i] = starts[i : i+1 : i+1]
	}
	return groups
}

// compareStates orders states, so that the order segments are tried from
// does not depend on map iteration.
func compareStates(a, b state) int {
	return cmp.Or(cmp.Compare(a.gen, b.gen), compareBool(a.held, b.held), cmp.Compare(a.value, b.value),
		cmp.Compare(a.holder, b.holder), cmp.Compare(a.ranked, b.ranked))
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// linearization returns, for each segment of a linearizable chain, start
// states it was found linearizable from, one of which leads on to the
// end: the last segment's, then back through the start states each
// segment left them from.
func linearization(segs []segment) [][]state {
	out := make([][]state, len(segs))
	if len(segs) == 0 {
		return out
	}
	group := segs[len(segs)-1].from
	for i := len(segs) - 1; i >= 0; i-- {
		out[i] = group
		if i > 0 {
			group = segs[i-1].via[group[0]]
		}
	}
	return out
}
