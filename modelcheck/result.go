package modelcheck

import (
	"fmt"
	"io"
	"time"
)

// Verdict is the outcome of a search.
type Verdict uint8

const (
	// Passed: every reachable world was visited and no property failed.
	Passed Verdict = iota + 1
	// Violated: a property failed; Result.Violation holds the shortest
	// counterexample.
	Violated
	// Incomplete: a limit stopped the search before it visited every
	// reachable world, and no property had failed by then.
	Incomplete
)

func (v Verdict) String() string {
	switch v {
	case Passed:
		return "passed"
	case Violated:
		return "violated"
	case Incomplete:
		return "incomplete"
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// Result reports a search.
type Result[W comparable] struct {
	Model   string
	Verdict Verdict
	// States is the number of distinct worlds visited; Moves the number
	// of moves examined; Depth the length of the longest shortest path.
	States, Moves, Depth int
	Elapsed              time.Duration
	// Stopped says which limit ended an Incomplete search.
	Stopped string
	// Violation is the shortest counterexample of a Violated search.
	Violation *Violation[W]
}

// Violation is a failed property and the shortest path to it.
type Violation[W comparable] struct {
	// Property names the invariant, move invariant or "owes work".
	Property string
	// Reason says how the property fails.
	Reason string
	// Trace starts at an initial world (label "init") and ends at the
	// world that breaks the property.
	Trace []Step[W]
}

// Step is one move of a trace and the world after it.
type Step[W comparable] struct {
	Label string
	World W
}

// Summary is a one-line report.
func (r *Result[W]) Summary() string {
	s := fmt.Sprintf("%s: %s, %d states, %d moves, depth %d, %v", r.Model, r.Verdict, r.States, r.Moves, r.Depth, r.Elapsed.Round(time.Millisecond))
	switch r.Verdict {
	case Incomplete:
		s += " (stopped: " + r.Stopped + ")"
	case Violated:
		s += fmt.Sprintf(" (%s after %d steps)", r.Violation.Property, len(r.Violation.Trace)-1)
	}
	return s
}

// WriteTrace prints the counterexample as numbered steps with the world
// after each, rendered by format (or %+v when nil).
func (v *Violation[W]) WriteTrace(w io.Writer, format func(W) string) error {
	if format == nil {
		format = func(x W) string { return fmt.Sprintf("%+v", x) }
	}
	if _, err := fmt.Fprintf(w, "violation of %q: %s\n", v.Property, v.Reason); err != nil {
		return err
	}
	for i, s := range v.Trace {
		if _, err := fmt.Fprintf(w, "%3d. %s\n     %s\n", i, s.Label, format(s.World)); err != nil {
			return err
		}
	}
	return nil
}
