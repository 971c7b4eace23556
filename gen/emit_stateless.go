package gen

import (
	"bytes"
	"strings"

	"github.com/rivus/collab/policy"
)

// emitStateless writes, for the test file, the configuration of the
// equivalent github.com/qmuntal/stateless machine. It configures every row
// as the stateless behaviour it is, with the guards as stateless guards, so
// that stateless itself decides each step: it is an independent
// interpreter of the spec that the generated test checks Step against, and
// the baseline of the generated benchmark.
func (e *emitter) emitStateless() {
	n := e.n
	e.p.line("")
	e.p.line("// %s configures sm, whose states are %s values, with the rows of", n.configureStateless(), n.stateType())
	e.p.line("// the %s machine, and returns it. Guards read facts.", e.t.Name)
	e.p.line("// Rows become Permit, PermitReentry or InternalTransition, ignored triggers")
	e.p.line("// Ignore, and rejected ones stay unpermitted, so Fire returns an error.")
	e.p.line("// A row that fires calls emit once with its outputs, even none: an")
	e.p.line("// internal row from its action, any other from the entry action of its")
	e.p.line("// target, which tells rows apart by their source and, if it must, by facts.")
	e.p.line("func %s(sm *stateless.StateMachine, facts func() %s, emit func(%s)) *stateless.StateMachine {", n.configureStateless(), n.factsType(), n.outputsType())
	body := e.statelessBody()
	usesEmitter := strings.Contains(body, "o.outputs(")
	e.emitStatelessLocals(usesEmitter)
	e.p.buf.WriteString(body)
	e.p.line("return sm")
	e.p.line("}")
	e.emitGuardMethods()
	if usesEmitter {
		e.emitEmitterType()
	}
}

// statelessBody writes the Configure calls of every state.
func (e *emitter) statelessBody() string {
	saved := e.p.buf
	e.p.buf = bytes.Buffer{}
	for s := range e.t.States {
		e.emitConfigure(policy.StateID(s))
	}
	body := e.p.buf.String()
	e.p.buf = saved
	return body
}

// emitStatelessLocals writes the guard and emitter values the
// configuration uses. Guards exist only where a row reads a fact.
func (e *emitter) emitStatelessLocals(usesEmitter bool) {
	if len(e.literals()) > 0 {
		e.p.line("g := %s{facts: facts}", e.n.guardsType())
	}
	if usesEmitter {
		e.p.line("o := %s{emit: emit}", e.n.emitterType())
	}
}

// emitConfigure writes the configuration of state s: its rows, its
// ignored triggers, and the entry actions that emit the outputs of the rows
// that lead into it.
func (e *emitter) emitConfigure(s policy.StateID) {
	var calls []string
	for _, r := range e.t.Rows {
		if r.From == s {
			calls = append(calls, e.behaviour(r))
		}
	}
	for _, t := range e.disposed(e.t.Ignores, s) {
		calls = append(calls, "Ignore("+t+")")
	}
	for t := range e.t.Triggers {
		if action := e.entryAction(s, policy.TriggerID(t)); action != "" {
			calls = append(calls, "OnEntryFrom("+e.trigger(policy.TriggerID(t))+", "+action+")")
		}
	}
	if rejected := e.disposed(e.t.Rejects, s); len(rejected) > 0 {
		e.p.line("// Rejected, so not permitted: %s.", strings.Join(rejected, ", "))
	}
	e.p.line("sm.Configure(%s)%s", e.state(s), chain(calls))
}

// chain writes calls as a method chain, one call a line.
func chain(calls []string) string {
	var b strings.Builder
	for _, c := range calls {
		b.WriteString(".\n")
		b.WriteString(c)
	}
	return b.String()
}

// behaviour writes the stateless call that configures row r.
func (e *emitter) behaviour(r policy.Row) string {
	args := []string{e.trigger(r.Trigger)}
	switch {
	case r.Internal:
		args = append(args, "o.outputs("+e.outputsExpr(r.Outputs)+")")
	case r.To != r.From:
		args = append(args, e.state(r.To))
	}
	args = append(args, e.guardArgs(r.Guard)...)
	call := "Permit"
	switch {
	case r.Internal:
		call = "InternalTransition"
	case r.To == r.From:
		call = "PermitReentry"
	}
	return call + "(" + strings.Join(args, ", ") + ")"
}

// guardArgs writes a guard as stateless guard functions, one per literal.
func (e *emitter) guardArgs(g policy.Guard) []string {
	var args []string
	for i, w := range e.t.Facts {
		bit := policy.Facts(1) << i
		switch {
		case g.Mask&bit == 0:
		case g.Want&bit != 0:
			args = append(args, "g."+when(w.Name))
		default:
			args = append(args, "g."+unless(w.Name))
		}
	}
	return args
}

// entryAction writes the action that emits the outputs of the external
// rows that trigger t takes into state s, or "" if there are none.
func (e *emitter) entryAction(s policy.StateID, t policy.TriggerID) string {
	var rows []policy.Row
	for _, r := range e.t.Rows {
		if r.To == s && r.Trigger == t && !r.Internal {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return ""
	}
	if sameOutputs(rows) {
		return "o.outputs(" + e.outputsExpr(rows[0].Outputs) + ")"
	}
	var b strings.Builder
	b.WriteString("func(ctx context.Context, _ ...any) error {\n")
	b.WriteString("switch stateless.GetTransition(ctx).Source {\n")
	for from := range e.t.States {
		e.writeEntryCase(&b, filterFrom(rows, policy.StateID(from)))
	}
	b.WriteString("}\nreturn nil\n}")
	return b.String()
}

// writeEntryCase writes the case of one source state in an entry action;
// rows from one source with different outputs differ by their guards.
func (e *emitter) writeEntryCase(b *strings.Builder, rows []policy.Row) {
	if len(rows) == 0 {
		return
	}
	b.WriteString("case " + e.state(rows[0].From) + ":\n")
	if sameOutputs(rows) {
		b.WriteString("emit(" + e.outputsExpr(rows[0].Outputs) + ")\n")
		return
	}
	b.WriteString("switch f := facts(); {\n")
	for _, r := range rows {
		b.WriteString("case " + e.guardCond(r.Guard, "f") + ":\n")
		b.WriteString("emit(" + e.outputsExpr(r.Outputs) + ")\n")
	}
	b.WriteString("}\n")
}

func filterFrom(rows []policy.Row, from policy.StateID) []policy.Row {
	var out []policy.Row
	for _, r := range rows {
		if r.From == from {
			out = append(out, r)
		}
	}
	return out
}

func sameOutputs(rows []policy.Row) bool {
	for _, r := range rows {
		if r.Outputs != rows[0].Outputs {
			return false
		}
	}
	return true
}

// literal is a fact literal some guard uses.
type literal struct {
	fact int
	neg  bool
}

// literals returns the literals the rows' guards use, in fact order,
// positive first.
func (e *emitter) literals() []literal {
	var used [2]policy.Facts // [0] positive, [1] negated
	for _, r := range e.t.Rows {
		used[0] |= r.Guard.Mask & r.Guard.Want
		used[1] |= r.Guard.Mask &^ r.Guard.Want
	}
	var lits []literal
	for i := range e.t.Facts {
		for neg := range 2 {
			if used[neg]&(1<<i) != 0 {
				lits = append(lits, literal{fact: i, neg: neg == 1})
			}
		}
	}
	return lits
}

func (e *emitter) emitGuardMethods() {
	lits := e.literals()
	if len(lits) == 0 {
		return
	}
	typ := e.n.guardsType()
	e.p.line("")
	e.p.line("// %s holds one stateless guard per fact literal the rows use; as", typ)
	e.p.line("// methods they keep their names in stateless's graphs and errors.")
	e.p.line("type %s struct{ facts func() %s }", typ, e.n.factsType())
	for _, l := range lits {
		w := e.t.Facts[l.fact]
		name, op := when(w.Name), "!="
		if l.neg {
			name, op = unless(w.Name), "=="
		}
		e.p.line("")
		e.p.line("func (g %s) %s(context.Context, ...any) bool { return g.facts()&%s %s 0 }", typ, name, e.n.fact(w.Name), op)
	}
}

func (e *emitter) emitEmitterType() {
	typ := e.n.emitterType()
	e.p.line("")
	e.p.line("// %s turns outputs into stateless actions.", typ)
	e.p.line("type %s struct{ emit func(%s) }", typ, e.n.outputsType())
	e.p.line("")
	e.p.line("// outputs returns an action that emits out.")
	e.p.line("func (o %s) outputs(out %s) stateless.ActionFunc {", typ, e.n.outputsType())
	e.p.line("return func(context.Context, ...any) error {")
	e.p.line("o.emit(out)")
	e.p.line("return nil")
	e.p.line("}")
	e.p.line("}")
}
