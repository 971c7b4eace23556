package gen

import (
	"fmt"

	"github.com/rivus/collab/policy"
)

// emitTable writes the table as data, built once when the package loads;
// the policy's Table method returns it.
func (e *emitter) emitTable() {
	n, t := e.n, e.t
	e.p.line("")
	e.p.line("var %s = &policy.Table{", n.tableVar())
	e.p.line("Name: %q,", t.Name)
	e.p.line("Doc: %q,", t.Doc)
	e.p.line("Family: %q,", t.Family)
	e.p.line("Spec: %q,", t.Spec)
	e.p.line("Initial: policy.StateID(%s),", e.state(t.Initial))
	e.emitWords("States", t.States)
	e.emitWords("Triggers", t.Triggers)
	e.emitWords("Facts", t.Facts)
	e.emitWords("Outputs", t.Outputs)
	e.p.line("Rows: []policy.Row{")
	for _, r := range t.Rows {
		e.p.line("%s,", e.rowLiteral(r))
	}
	e.p.line("},")
	e.emitPairs("Ignores", t.Ignores)
	e.emitPairs("Rejects", t.Rejects)
	if len(t.Waived) > 0 {
		e.emitWords("Waived", t.Waived)
	}
	e.p.line("}")
}

func (e *emitter) emitWords(field string, words []policy.Word) {
	e.p.line("%s: []policy.Word{", field)
	for _, w := range words {
		if w.Doc == "" {
			e.p.line("{Name: %q},", w.Name)
			continue
		}
		e.p.line("{Name: %q, Doc: %q},", w.Name, w.Doc)
	}
	e.p.line("},")
}

func (e *emitter) emitPairs(field string, pairs []policy.Pair) {
	e.p.line("%s: []policy.Pair{", field)
	for _, p := range pairs {
		e.p.line("{State: policy.StateID(%s), Trigger: policy.TriggerID(%s)},", e.state(p.State), e.trigger(p.Trigger))
	}
	e.p.line("},")
}

// rowLiteral writes a row with named constants, leaving out zero fields.
func (e *emitter) rowLiteral(r policy.Row) string {
	lit := fmt.Sprintf("{From: policy.StateID(%s), Trigger: policy.TriggerID(%s)", e.state(r.From), e.trigger(r.Trigger))
	if r.Guard.Mask != 0 {
		lit += fmt.Sprintf(", Guard: policy.Guard{Mask: policy.Facts(%s)", e.factsExpr(r.Guard.Mask))
		if r.Guard.Want != 0 {
			lit += fmt.Sprintf(", Want: policy.Facts(%s)", e.factsExpr(r.Guard.Want))
		}
		lit += "}"
	}
	if r.Outputs != 0 {
		lit += fmt.Sprintf(", Outputs: policy.Outputs(%s)", e.outputsExpr(r.Outputs))
	}
	lit += fmt.Sprintf(", To: policy.StateID(%s)", e.state(r.To))
	if r.Internal {
		lit += ", Internal: true"
	}
	return lit + fmt.Sprintf(", Line: %d}", r.Line)
}
