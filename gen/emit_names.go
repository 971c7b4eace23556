package gen

import (
	"strings"

	"github.com/rivus/collab/policy"
)

// emitter writes the Go code of one machine.
type emitter struct {
	t *policy.Table
	n goNames
	p printer
}

func newEmitter(t *policy.Table) *emitter {
	return &emitter{t: t, n: newGoNames(t.Name, t.Family)}
}

func (e *emitter) state(s policy.StateID) string     { return e.n.state(e.t.States[s].Name) }
func (e *emitter) trigger(t policy.TriggerID) string { return e.n.trigger(e.t.Triggers[t].Name) }

// factsExpr writes a fact set as an OR of constants, "0" when empty.
func (e *emitter) factsExpr(f policy.Facts) string {
	var terms []string
	for i, w := range e.t.Facts {
		if f&(1<<i) != 0 {
			terms = append(terms, e.n.fact(w.Name))
		}
	}
	if len(terms) == 0 {
		return "0"
	}
	return strings.Join(terms, " | ")
}

// outputsExpr writes an output set as an OR of constants, "0" when empty.
func (e *emitter) outputsExpr(o policy.Outputs) string {
	var terms []string
	for i, w := range e.t.Outputs {
		if o&(1<<i) != 0 {
			terms = append(terms, e.n.output(w.Name))
		}
	}
	if len(terms) == 0 {
		return "0"
	}
	return strings.Join(terms, " | ")
}

// guardCond writes the Go condition for guard g over the facts in variable
// f; it is "true" for the empty guard.
func (e *emitter) guardCond(g policy.Guard, f string) string {
	switch {
	case g.Mask == 0:
		return "true"
	case g.Mask&(g.Mask-1) == 0 && g.Want != 0: // one positive literal
		return f + "&" + e.factsExpr(g.Mask) + " != 0"
	case g.Mask&(g.Mask-1) == 0: // one negative literal
		return f + "&" + e.factsExpr(g.Mask) + " == 0"
	}
	return f + "&(" + e.factsExpr(g.Mask) + ") == " + wrap(e.factsExpr(g.Want))
}

// wrap parenthesises an OR expression so it reads as one operand.
func wrap(expr string) string {
	if strings.Contains(expr, "|") {
		return "(" + expr + ")"
	}
	return expr
}

// guardText writes a guard as the spec does: "[a, !b]", "" when empty.
func guardText(t *policy.Table, g policy.Guard) string {
	var lits []string
	for i, w := range t.Facts {
		bit := policy.Facts(1) << i
		switch {
		case g.Mask&bit == 0:
		case g.Want&bit != 0:
			lits = append(lits, w.Name)
		default:
			lits = append(lits, "!"+w.Name)
		}
	}
	if len(lits) == 0 {
		return ""
	}
	return "[" + strings.Join(lits, ", ") + "]"
}

// outputsText writes an output set as the spec does: "a, b".
func outputsText(t *policy.Table, o policy.Outputs) string {
	var names []string
	for i, w := range t.Outputs {
		if o&(1<<i) != 0 {
			names = append(names, w.Name)
		}
	}
	return strings.Join(names, ", ")
}

// rowLabel writes a row as the diagrams label it: "Trigger [guard] / outputs".
func rowLabel(t *policy.Table, r policy.Row) string {
	label := t.Triggers[r.Trigger].Name
	if g := guardText(t, r.Guard); g != "" {
		label += " " + g
	}
	if o := outputsText(t, r.Outputs); o != "" {
		label += " / " + o
	}
	return label
}
