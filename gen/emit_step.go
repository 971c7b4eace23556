package gen

import (
	"strings"

	"github.com/rivus/collab/policy"
)

// emitStep writes the result type and the Step function: a switch on the
// state, then the trigger, then the guards, with one return per row.
func (e *emitter) emitStep() {
	n := e.n
	e.p.line("")
	e.p.line("// %s is the answer of %s: a small value, so stepping allocates nothing.", n.resultType(), n.stepFunc())
	e.p.line("type %s struct {", n.resultType())
	e.p.line("Next %s // the state after the step; unchanged unless Verdict is policy.Fired", n.stateType())
	e.p.line("Outputs %s // the effects to carry out", n.outputsType())
	e.p.line("Verdict policy.Verdict")
	e.p.line("}")
	e.p.line("")
	e.p.line("// %s returns the next state and outputs of the %s machine for trigger t", n.stepFunc(), e.t.Name)
	e.p.line("// fired in state s with facts f, or a result whose Verdict says the spec")
	e.p.line("// ignores or rejects t in s. It is pure and allocates nothing.")
	e.p.line("func %s(s %s, t %s, f %s) %s {", n.stepFunc(), n.stateType(), n.triggerType(), n.factsType(), n.resultType())
	e.p.line("switch s {")
	for s := range e.t.States {
		e.emitStepState(policy.StateID(s))
	}
	e.p.line("}")
	e.p.line("return %s{Next: s, Verdict: policy.Rejected}", n.resultType())
	e.p.line("}")
}

func (e *emitter) emitStepState(s policy.StateID) {
	e.p.line("case %s:", e.state(s))
	e.p.line("switch t {")
	for t := range e.t.Triggers {
		rows := e.rowsOf(s, policy.TriggerID(t))
		if len(rows) == 0 {
			continue
		}
		e.p.line("case %s:", e.trigger(policy.TriggerID(t)))
		e.emitStepRows(rows)
	}
	if ignored := e.disposed(e.t.Ignores, s); len(ignored) > 0 {
		e.p.line("case %s:", strings.Join(ignored, ", "))
		e.p.line("return %s{Next: s, Verdict: policy.Ignored}", e.n.resultType())
	}
	if rejected := e.disposed(e.t.Rejects, s); len(rejected) > 0 {
		e.p.line("case %s:", strings.Join(rejected, ", "))
		e.p.line("return %s{Next: s, Verdict: policy.Rejected}", e.n.resultType())
	}
	e.p.line("}")
}

// emitStepRows writes the rows of one state and trigger: a lone unguarded
// row returns at once, guarded rows are the cases of a switch.
func (e *emitter) emitStepRows(rows []policy.Row) {
	if len(rows) == 1 && rows[0].Guard.Mask == 0 {
		e.p.line("return %s // %s:%d", e.result(rows[0]), e.t.Spec, rows[0].Line)
		return
	}
	e.p.line("switch {")
	for _, r := range rows {
		e.p.line("case %s: // %s:%d", e.guardCond(r.Guard, "f"), e.t.Spec, r.Line)
		e.p.line("return %s", e.result(r))
	}
	e.p.line("}")
}

// result writes the Result literal of a fired row.
func (e *emitter) result(r policy.Row) string {
	next := e.state(r.To)
	if r.Internal {
		next = "s"
	}
	lit := e.n.resultType() + "{Next: " + next
	if r.Outputs != 0 {
		lit += ", Outputs: " + e.outputsExpr(r.Outputs)
	}
	return lit + ", Verdict: policy.Fired}"
}

// rowsOf returns the rows of state s and trigger t in spec order.
func (e *emitter) rowsOf(s policy.StateID, t policy.TriggerID) []policy.Row {
	var rows []policy.Row
	for _, r := range e.t.Rows {
		if r.From == s && r.Trigger == t {
			rows = append(rows, r)
		}
	}
	return rows
}

// disposed returns the constants of the triggers of state s in pairs, in
// trigger order.
func (e *emitter) disposed(pairs []policy.Pair, s policy.StateID) []string {
	var names []string
	for t := range e.t.Triggers {
		for _, p := range pairs {
			if p == (policy.Pair{State: s, Trigger: policy.TriggerID(t)}) {
				names = append(names, e.trigger(p.Trigger))
			}
		}
	}
	return names
}
