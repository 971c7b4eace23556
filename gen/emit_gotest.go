package gen

import (
	"sync"
	"text/template"

	"github.com/rivus/collab/policy"
)

// emitTest writes the unformatted source of m_gen_test.go: the stateless
// machine that is Step's test oracle and baseline, the differential test,
// a test of the names against the table, an allocation test and the
// benchmark of Step against stateless. stateless is linked by tests only.
func emitTest(t *policy.Table, pkg string) []byte {
	e := newEmitter(t)
	n := e.n
	e.p.line("// %s", header(t))
	e.p.line("")
	e.p.line("package %s", pkg)
	e.p.line("")
	e.p.line("import (")
	for _, imp := range []string{"context", "fmt", "slices", "testing", "time", "", "github.com/qmuntal/stateless", "github.com/rivus/collab/policy"} {
		if imp == "" {
			e.p.line("")
			continue
		}
		e.p.line("%q", imp)
	}
	e.p.line(")")
	e.emitStateless()
	err := testTemplate().Execute(&e.p.buf, map[string]any{
		"M": n.m, "U": n.u, "Family": n.family,
		"State": n.stateType(), "Trigger": n.triggerType(), "Facts": n.factsType(),
		"Outputs": n.outputsType(), "Result": n.resultType(), "Step": n.stepFunc(),
		"Policy": n.policyVar(), "Configure": n.configureStateless(),
	})
	if err != nil { // the template and its data are fixed: a failure is a bug here
		panic(err)
	}
	return e.p.buf.Bytes()
}

// testTemplate is the tests of m_gen_test.go, after the stateless
// configuration. It is parsed at its first use, not when the package is
// initialised: every process of the command line links this package, and
// `collab lock` should not pay for parsing a template it never executes.
var testTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("test").Parse(testTemplateText))
})

// testTemplateText is the text of testTemplate.
const testTemplateText = `
// {{.U}}Stateless is the stateless machine of {{.Configure}}, in
// whatever state the test sets, firing with the facts it sets.
type {{.U}}Stateless struct {
	sm    *stateless.StateMachine
	state {{.State}}
	facts {{.Facts}}
	out   {{.Outputs}}
	emits int
}

func new{{.M}}Stateless() *{{.U}}Stateless {
	m := &{{.U}}Stateless{}
	m.sm = stateless.NewStateMachineWithExternalStorage(
		func(context.Context) (stateless.State, error) { return m.state, nil },
		func(_ context.Context, s stateless.State) error { m.state = s.({{.State}}); return nil },
		stateless.FiringImmediate)
	{{.Configure}}(m.sm, func() {{.Facts}} { return m.facts }, func(o {{.Outputs}}) { m.out |= o; m.emits++ })
	return m
}

// fire fires tr in s with facts f and returns what stateless decided, as
// {{.Step}} answers.
func (m *{{.U}}Stateless) fire(tb testing.TB, s {{.State}}, tr {{.Trigger}}, f {{.Facts}}) {{.Result}} {
	m.state, m.facts, m.out, m.emits = s, f, 0, 0
	err := m.sm.Fire(tr)
	got := {{.Result}}{Next: m.state, Outputs: m.out, Verdict: policy.Ignored}
	switch {
	case err != nil:
		got.Verdict = policy.Rejected
	case m.emits == 1:
		got.Verdict = policy.Fired
	case m.emits > 1:
		tb.Fatalf("%v in %v with facts %v: stateless emitted %d times", tr, s, f, m.emits)
	}
	return got
}

// Test{{.M}}StepMatchesStateless fires every trigger in every state under every
// assignment of the facts through {{.Step}}, the stateless machine of
// {{.Configure}}, the table interpreter and {{.Policy}}, and requires
// one answer from all four: next state, verdict and outputs.
func Test{{.M}}StepMatchesStateless(t *testing.T) {
	sm := new{{.M}}Stateless()
	table := {{.Policy}}.Table()
	for s := range {{.State}}(len(table.States)) {
		for tr := range {{.Trigger}}(len(table.Triggers)) {
			for i := range 1 << len(table.Facts) {
				f := {{.Facts}}(i)
				want := {{.Step}}(s, tr, f)
				if got := sm.fire(t, s, tr, f); got != want {
					t.Fatalf("%v in %v with facts %v: {{.Step}} gives %+v, stateless %+v", tr, s, f, want, got)
				}
				conv := policy.Result{Next: policy.StateID(want.Next), Outputs: policy.Outputs(want.Outputs), Verdict: want.Verdict}
				if ref := table.Step(policy.StateID(s), policy.TriggerID(tr), policy.Facts(f)); ref != conv {
					t.Fatalf("%v in %v with facts %v: {{.Step}} gives %+v, the table %+v", tr, s, f, conv, ref)
				}
				if pol := {{.Policy}}.Step(policy.StateID(s), policy.TriggerID(tr), policy.Facts(f)); pol != conv {
					t.Fatalf("%v in %v with facts %v: {{.Step}} gives %+v, {{.Policy}} %+v", tr, s, f, conv, pol)
				}
			}
		}
	}
}

// Test{{.M}}Names checks the String methods and {{.Policy}} against the table.
func Test{{.M}}Names(t *testing.T) {
	table := {{.Policy}}.Table()
	var got, want []string
	for i, w := range table.States {
		got, want = append(got, {{.State}}(i).String()), append(want, w.Name)
	}
	got = append(got, {{.State}}(len(table.States)).String())
	want = append(want, fmt.Sprintf("{{.State}}(%d)", len(table.States)))
{{- if not .Family}}
	for i, w := range table.Triggers {
		got, want = append(got, {{.Trigger}}(i).String()), append(want, w.Name)
	}
	for i, w := range table.Facts {
		got, want = append(got, ({{.Facts}}(1) << i).String()), append(want, w.Name)
	}
	for i, w := range table.Outputs {
		got, want = append(got, ({{.Outputs}}(1) << i).String()), append(want, w.Name)
	}
	got = append(got, {{.Trigger}}(len(table.Triggers)).String())
	want = append(want, fmt.Sprintf("{{.Trigger}}(%d)", len(table.Triggers)))
{{- end}}
	if !slices.Equal(got, want) {
		t.Errorf("String methods give %q, want %q", got, want)
	}
	p := {{.Policy}}
	if p.Name() != table.Name || p.Family() != table.Family || p.Initial() != table.Initial {
		t.Errorf("policy says name %q, family %q, initial %d; its table %q, %q, %d", p.Name(), p.Family(), p.Initial(), table.Name, table.Family, table.Initial)
	}
}

// {{.U}}Move is one row's firing: its state and trigger, with facts its
// guard holds for.
type {{.U}}Move struct {
	s  {{.State}}
	tr {{.Trigger}}
	f  {{.Facts}}
}

// {{.U}}Moves returns one firing of every row of the table.
func {{.U}}Moves() []{{.U}}Move {
	var moves []{{.U}}Move
	for _, r := range {{.Policy}}.Table().Rows {
		moves = append(moves, {{.U}}Move{{"{"}}{{.State}}(r.From), {{.Trigger}}(r.Trigger), {{.Facts}}(r.Guard.Want)})
	}
	return moves
}

// Test{{.M}}StepAllocatesNothing requires {{.Step}} and {{.Policy}}.Step to
// allocate nothing.
func Test{{.M}}StepAllocatesNothing(t *testing.T) {
	moves := {{.U}}Moves()
	allocs := testing.AllocsPerRun(10, func() {
		for _, m := range moves {
			{{.U}}Sink |= {{.Step}}(m.s, m.tr, m.f).Outputs
			{{.U}}Sink |= {{.Outputs}}({{.Policy}}.Step(policy.StateID(m.s), policy.TriggerID(m.tr), policy.Facts(m.f)).Outputs)
		}
	})
	if allocs != 0 {
		t.Errorf("stepping every row allocates %v times", allocs)
	}
}

// {{.U}}Sink keeps the benchmark's steps from being optimised away.
var {{.U}}Sink {{.Outputs}}

// Benchmark{{.M}}Step fires every row of the table b.N times through
// {{.Step}} and through the stateless machine, in this process, and
// reports the time of one step of each and how many times faster
// {{.Step}} is (x-faster).
func Benchmark{{.M}}Step(b *testing.B) {
	moves, sm := {{.U}}Moves(), new{{.M}}Stateless()
	var out {{.Outputs}}
	start := time.Now()
	for range b.N {
		for _, m := range moves {
			out |= {{.Step}}(m.s, m.tr, m.f).Outputs
		}
	}
	generated := time.Since(start)
	start = time.Now()
	for range b.N {
		for _, m := range moves {
			if r := sm.fire(b, m.s, m.tr, m.f); r.Verdict != policy.Fired {
				b.Fatalf("%v in %v with facts %v: stateless says %v", m.tr, m.s, m.f, r.Verdict)
			}
		}
	}
	reference := time.Since(start)
	{{.U}}Sink = out
	steps := float64(b.N) * float64(max(len(moves), 1))
	b.ReportMetric(0, "ns/op") // the sum of both sides means nothing
	b.ReportMetric(float64(generated.Nanoseconds())/steps, "generated-ns/step")
	b.ReportMetric(float64(reference.Nanoseconds())/steps, "stateless-ns/step")
	b.ReportMetric(float64(reference)/float64(max(generated, 1)), "x-faster")
}
`
