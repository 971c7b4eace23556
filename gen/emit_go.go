package gen

import (
	"strconv"

	"github.com/rivus/collab/policy"
)

// emitCode writes the unformatted source of m_gen.go.
func emitCode(t *policy.Table, pkg string) []byte {
	e := newEmitter(t)
	e.p.line("// %s", header(t))
	e.p.line("")
	e.p.line("package %s", pkg)
	e.p.line("")
	e.p.line("import %q", "github.com/rivus/collab/policy")
	e.p.line("")
	e.p.line("// A compile error here means this file was generated for another version of package policy: run go generate.")
	e.p.line("const _ = policy.SupportPackageIsVersion1")
	e.emitStateType()
	if !e.n.family {
		e.emitTriggerType()
		e.emitSetType(e.n.factsType(), "policy.Facts", e.n.factNames(), t.Facts, e.n.fact,
			"is a set of the facts the runtime observed when it fired a trigger, one bit per fact.")
		e.emitSetType(e.n.outputsType(), "policy.Outputs", e.n.outputNames(), t.Outputs, e.n.output,
			"is a set of the effects a step asks the runtime to carry out, one bit per output.")
	}
	e.emitConstGuard()
	e.emitStep()
	e.emitPolicy()
	e.emitTable()
	return e.p.buf.Bytes()
}

func (e *emitter) emitStateType() {
	typ := e.n.stateType()
	e.p.line("")
	e.p.line("// %s is a state of the %s machine.", typ, e.t.Name)
	if e.t.Doc != "" {
		e.p.line("//")
		e.p.comment(e.t.Doc)
	}
	e.p.line("type %s policy.StateID", typ)
	e.p.line("")
	e.p.line("// The states of the %s machine, numbered in the order of the spec.", e.t.Name)
	e.emitEnum(typ, e.t.States, e.n.state, e.n.stateNames())
}

func (e *emitter) emitTriggerType() {
	typ := e.n.triggerType()
	e.p.line("")
	e.p.line("// %s is an event the runtime fires at a %s machine.", typ, e.t.Name)
	e.p.line("type %s policy.TriggerID", typ)
	e.p.line("")
	e.p.line("// The triggers of the %s machine, numbered in the order of the spec.", e.t.Name)
	e.emitEnum(typ, e.t.Triggers, e.n.trigger, e.n.triggerNames())
}

// emitEnum writes the constants, names and String method of a state or
// trigger type.
func (e *emitter) emitEnum(typ string, words []policy.Word, goName func(string) string, names string) {
	e.p.line("const (")
	for i, w := range words {
		if w.Doc != "" {
			e.p.comment(w.Doc)
		}
		e.p.line("%s %s = %d", goName(w.Name), typ, i)
	}
	e.p.line(")")
	e.p.line("")
	e.emitNames(names, words)
	e.p.line("")
	e.p.line("// String returns the name the spec gives the value, or %s(n) for a value it does not define.", typ)
	e.p.line("func (v %s) String() string {", typ)
	e.p.line("return policy.FormatID(int(v), %s[:], %q)", names, typ)
	e.p.line("}")
}

func (e *emitter) emitNames(names string, words []policy.Word) {
	e.p.line("var %s = [...]string{", names)
	for _, w := range words {
		e.p.line("%q,", w.Name)
	}
	e.p.line("}")
}

// emitSetType writes a fact or output set type: its bit constants, names,
// Has and String.
func (e *emitter) emitSetType(typ, base, names string, words []policy.Word, goName func(string) string, doc string) {
	e.p.line("")
	e.p.line("// %s %s", typ, doc)
	e.p.line("type %s %s", typ, base)
	if len(words) > 0 {
		e.p.line("")
		e.p.line("// The bits of %s, numbered in the order of the spec.", typ)
		e.p.line("const (")
		for i, w := range words {
			if w.Doc != "" {
				e.p.comment(w.Doc)
			}
			e.p.line("%s %s = 1 << %d", goName(w.Name), typ, i)
		}
		e.p.line(")")
	}
	e.p.line("")
	e.emitNames(names, words)
	e.p.line("")
	e.p.line("// Has reports whether every bit set in x is set in v.")
	e.p.line("func (v %s) Has(x %s) bool { return v&x == x }", typ, typ)
	e.p.line("")
	e.p.line("// String returns the names of the bits set in v joined by \"|\", or \"0\".")
	e.p.line("func (v %s) String() string {", typ)
	e.p.line("return policy.FormatBits(uint64(v), %s[:], %q)", names, typ)
	e.p.line("}")
}

// emitConstGuard writes stringer's guard: if the constants and the name
// tables of this file ever disagree, or a family's vocabulary in package
// policy is no longer numbered as when this file was generated, it stops
// compiling.
func (e *emitter) emitConstGuard() {
	e.p.line("")
	e.p.line("// An \"invalid array index\" compile error here means the constants changed: run go generate.")
	e.p.line("func _() {")
	e.p.line("var x [1]struct{}")
	for i, w := range e.t.States {
		e.p.line("_ = x[%s-%d]", e.n.state(w.Name), i)
	}
	for i, w := range e.t.Triggers {
		e.p.line("_ = x[%s-%d]", e.n.trigger(w.Name), i)
	}
	for i, w := range e.t.Facts {
		e.p.line("_ = x[%s-1<<%d]", e.n.fact(w.Name), i)
	}
	for i, w := range e.t.Outputs {
		e.p.line("_ = x[%s-1<<%d]", e.n.output(w.Name), i)
	}
	e.p.line("}")
}

func (e *emitter) emitPolicy() {
	n, typ := e.n, e.n.policyType()
	e.p.line("")
	e.p.line("// %s is the %s machine as a policy.Policy, for the runtime and the model checker.", n.policyVar(), e.t.Name)
	e.p.line("var %s policy.Policy = %s{}", n.policyVar(), typ)
	e.p.line("")
	e.p.line("// %s implements policy.Policy with %s, converting IDs.", typ, n.stepFunc())
	e.p.line("type %s struct{}", typ)
	e.p.line("")
	e.p.line("func (%s) Name() string { return %s }", typ, strconv.Quote(e.t.Name))
	e.p.line("func (%s) Family() string { return %s }", typ, strconv.Quote(e.t.Family))
	e.p.line("func (%s) Initial() policy.StateID { return policy.StateID(%s) }", typ, e.state(e.t.Initial))
	e.p.line("func (%s) Table() *policy.Table { return %s }", typ, n.tableVar())
	e.p.line("")
	e.p.line("func (%s) Step(s policy.StateID, t policy.TriggerID, f policy.Facts) policy.Result {", typ)
	if n.family {
		e.p.line("r := %s(%s(s), t, f)", n.stepFunc(), n.stateType())
		e.p.line("return policy.Result{Next: policy.StateID(r.Next), Outputs: r.Outputs, Verdict: r.Verdict}")
	} else {
		e.p.line("r := %s(%s(s), %s(t), %s(f))", n.stepFunc(), n.stateType(), n.triggerType(), n.factsType())
		e.p.line("return policy.Result{Next: policy.StateID(r.Next), Outputs: policy.Outputs(r.Outputs), Verdict: r.Verdict}")
	}
	e.p.line("}")
}
