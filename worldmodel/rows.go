package worldmodel

import (
	"fmt"
	"strings"

	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// A counterexample names, under each step, what the policy did in it: each
// trigger fired at an instance, with its facts, and the spec row that
// fired (file:line, the row as the spec writes it), or that the state
// ignored or rejected the trigger. The world models do not keep which rows
// fired, since that would split worlds that are the same; traceRows finds
// them again by replaying each step of the trace on a world of the same
// bounds whose policy records its steps.

// firedStep is one Step call of the policy and its result.
type firedStep struct {
	state   policy.StateID
	trigger policy.TriggerID
	facts   policy.Facts
	result  policy.Result
}

// stepLog is a policy that notes its Step calls.
type stepLog struct {
	policy.Policy
	steps []firedStep
}

func (l *stepLog) Step(s policy.StateID, t policy.TriggerID, f policy.Facts) policy.Result {
	r := l.Policy.Step(s, t, f)
	l.steps = append(l.steps, firedStep{s, t, f, r})
	return r
}

// traceRows replays trace in the world that build makes of a policy that
// records p's steps, and returns the steps each move of the trace took.
// A model's Next computes each move whole before it yields it, so the
// steps recorded since the last yield are the move's.
func traceRows[W comparable](p policy.Policy, build func(policy.Policy) (modelcheck.Model[W], error), trace []modelcheck.Step[W]) ([][]firedStep, error) {
	log := &stepLog{Policy: p}
	m, err := build(log)
	if err != nil {
		return nil, err
	}
	rows := make([][]firedStep, len(trace))
	for i := 1; i < len(trace); i++ {
		log.steps = log.steps[:0]
		found := false
		m.Next(trace[i-1].World, func(label string, next W) {
			if !found && label == trace[i].Label && next == trace[i].World {
				rows[i] = append([]firedStep(nil), log.steps...)
				found = true
			}
			log.steps = log.steps[:0]
		})
	}
	return rows, nil
}

// writeTrace renders a violation as modelcheck's WriteTrace does, with the
// spec rows of each step.
func writeTrace[W comparable](v *modelcheck.Violation[W], t *policy.Table, format func(W) string, rows [][]firedStep) string {
	if format == nil {
		format = func(x W) string { return fmt.Sprintf("%+v", x) }
	}
	var b strings.Builder
	fmt.Fprintf(&b, "violation of %q: %s\n", v.Property, v.Reason)
	for i, s := range v.Trace {
		fmt.Fprintf(&b, "%3d. %s\n", i, s.Label)
		if i < len(rows) {
			for _, st := range rows[i] {
				fmt.Fprintf(&b, "     | %s\n", rowText(t, st))
			}
		}
		fmt.Fprintf(&b, "     %s\n", format(s.World))
	}
	return b.String()
}

// rowText says what st did, in the spec's words: the row that fired, with
// its place, and the facts given, or that the state ignored or rejected
// the trigger.
func rowText(t *policy.Table, st firedStep) string {
	state, trigger := wordName(t.States, int(st.state)), wordName(t.Triggers, int(st.trigger))
	facts := ""
	if st.facts != 0 {
		facts = " (facts: " + strings.Join(bitNames(t.Facts, uint64(st.facts)), ", ") + ")"
	}
	switch st.result.Verdict {
	case policy.Ignored:
		return fmt.Sprintf("%s: %s ignores %s%s", t.Spec, state, trigger, facts)
	case policy.Rejected:
		return fmt.Sprintf("%s: %s rejects %s%s", t.Spec, state, trigger, facts)
	}
	for _, r := range t.Rows {
		if r.From != st.state || r.Trigger != st.trigger || !r.Guard.Holds(st.facts) {
			continue
		}
		row := state + " --" + trigger
		if r.Guard.Mask != 0 {
			var lits []string
			for i, f := range t.Facts {
				switch bit := policy.Facts(1) << i; {
				case r.Guard.Mask&bit == 0:
				case r.Guard.Want&bit != 0:
					lits = append(lits, f.Name)
				default:
					lits = append(lits, "!"+f.Name)
				}
			}
			row += " [" + strings.Join(lits, ", ") + "]"
		}
		if r.Outputs != 0 {
			row += " / " + strings.Join(bitNames(t.Outputs, uint64(r.Outputs)), ", ")
		}
		if !r.Internal {
			row += " --> " + wordName(t.States, int(r.To))
		}
		return fmt.Sprintf("%s:%d: %s%s", t.Spec, r.Line, row, facts)
	}
	return fmt.Sprintf("%s: %s fired %s by no row%s", t.Spec, state, trigger, facts) // a policy that is not its table
}

func wordName(words []policy.Word, i int) string {
	if i < len(words) {
		return words[i].Name
	}
	return fmt.Sprintf("#%d", i)
}

// bitNames names the bits set in x, bit i by words[i].
func bitNames(words []policy.Word, x uint64) []string {
	var names []string
	for i, w := range words {
		if x&(1<<i) != 0 {
			names = append(names, w.Name)
		}
	}
	return names
}
