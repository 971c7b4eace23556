package linearizability

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// WriteHTML writes porcupine's visualisation to path: of the shortest
// failing object after a violation (the page stays small enough to
// read), drawn from the verbose check that found Report.Stuck; otherwise
// of every object (on request), which it checks again, verbosely, within
// the report's timeout. A check cut off by the timeout still draws what
// it found.
func (r Report) WriteHTML(path string) error {
	var ops [][]porcupine.Operation
	if r.failing != nil {
		ops = [][]porcupine.Operation{r.failing.ops}
	} else {
		ops = r.segmentOps()
	}
	m := verboseModel(ops)
	info := r.diag
	if info == nil {
		_, i := porcupine.CheckOperationsVerbose(m, nil, nonZero(r.timeout))
		info = &i
	}
	if err := porcupine.VisualizePath(m, *info, path); err != nil {
		return &HTMLError{Path: path, Err: err}
	}
	return nil
}

// verboseModel is the model of the verbose checks, over the partitions
// ops. The nondeterministic model takes each unbounded operation as the
// other does, and the lock's partitions are bounded in any history.
func verboseModel(ops [][]porcupine.Operation) porcupine.Model {
	m := model(true)
	m.Partition = func([]porcupine.Operation) [][]porcupine.Operation { return ops }
	return m
}

// segmentOps returns every object's segments, each after an opening to
// start states it was found linearizable from that lead on to the end of
// the object (see linearization), where the check got there; otherwise
// each object's whole history.
func (r Report) segmentOps() [][]porcupine.Operation {
	var out [][]porcupine.Operation
	for _, p := range r.parts {
		if !p.linearized {
			out = append(out, p.ops) // not checked to its end
			continue
		}
		for i, group := range linearization(p.segs) {
			out = append(out, framed(p.segs[i].ops, p.frame, group, nil))
		}
	}
	return out
}

// HTMLError reports a visualisation that could not be written.
type HTMLError struct {
	Path string
	Err  error
}

func (e *HTMLError) Error() string {
	return fmt.Sprintf("linearizability: writing %s: %v", e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *HTMLError) Unwrap() error { return e.Err }

// ShortestFailing prints the history of the shortest failing object,
// one operation a line in call order, times relative to its first call;
// "" when no object failed. An operation of unknown outcome says how
// the check took it (see reduce).
func (r Report) ShortestFailing() string {
	if r.failing == nil {
		return ""
	}
	ends := make(map[*Event]int64, len(r.failing.ops))
	for _, op := range r.failing.ops {
		if in, ok := op.Input.(*input); ok {
			ends[in.Event] = op.Return
		}
	}
	evs := slices.Clone(r.failing.evs)
	slices.SortStableFunc(evs, func(a, b *Event) int { return cmp.Compare(a.Call, b.Call) })
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d operations, not linearizable", r.failing.id, len(evs))
	if starts := r.failing.starts; len(starts) > 1 || len(starts) == 1 && starts[0] != (state{}) {
		fmt.Fprintf(&b, " from %s (what the operations before them can leave)", describeStates(starts))
	}
	b.WriteString("\n")
	start := evs[0].Call
	for _, e := range evs {
		end := "open"
		if !e.Open {
			end = "+" + since(start, e.Return)
		}
		if e.Uncertain() {
			switch ret, checked := ends[e]; {
			case !checked:
				end += " (outcome unknown: changes nothing, left out)"
			case ret != math.MaxInt64:
				end += " (outcome unknown: takes effect by +" + since(start, ret) + " if at all)"
			case !e.Open:
				end += " (outcome unknown: open end)"
			}
		}
		fmt.Fprintf(&b, "  +%s .. %s  p%d %s\n", since(start, e.Call), end, e.Process,
			describe(e.Kind, e.Input, e.Output, e.Open))
	}
	return b.String()
}
