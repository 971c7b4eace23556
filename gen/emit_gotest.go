package gen

import (
	"bytes"
	"text/template"

	"github.com/rivus/collab/policy"
)

// emitTest writes the unformatted source of m_gen_test.go: the
// differential test, and a test of the String methods against the table.
func emitTest(t *policy.Table, pkg string) []byte {
	n := newGoNames(t.Name)
	var b bytes.Buffer
	err := testTemplate.Execute(&b, map[string]string{
		"Header": header(t), "Pkg": pkg, "M": n.m,
		"State": n.stateType(), "Trigger": n.triggerType(), "Facts": n.factsType(),
		"Outputs": n.outputsType(), "Result": n.resultType(), "Step": n.stepFunc(),
		"Policy": n.policyVar(), "Table": n.tableFunc(), "Configure": n.configureStateless(),
		"StateNames": n.stateNames(), "TriggerNames": n.triggerNames(), "FactNames": n.factNames(),
	})
	if err != nil { // the template and its data are fixed: a failure is a bug here
		panic(err)
	}
	return b.Bytes()
}

// testTemplate is m_gen_test.go. Test{{.M}}StepMatchesStateless fires every
// trigger in every state under every fact assignment through Step, the
// stateless machine, the table interpreter and the Policy value, and
// requires one answer; Test{{.M}}Names checks the String methods and the
// Policy's metadata against the table.
var testTemplate = template.Must(template.New("test").Parse(`// {{.Header}}

package {{.Pkg}}

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/qmuntal/stateless"
	"github.com/rivus/collab/policy"
)

// Test{{.M}}StepMatchesStateless fires every trigger in every state under every
// assignment of the facts through {{.Step}}, the stateless machine of
// {{.Configure}}, the table interpreter and {{.Policy}}, and requires
// one answer from all four: next state, verdict and outputs.
func Test{{.M}}StepMatchesStateless(t *testing.T) {
	var (
		state {{.State}}
		facts {{.Facts}}
		out   {{.Outputs}}
		emits int
	)
	sm := stateless.NewStateMachineWithExternalStorage(
		func(context.Context) (stateless.State, error) { return state, nil },
		func(_ context.Context, s stateless.State) error { state = s.({{.State}}); return nil },
		stateless.FiringImmediate)
	{{.Configure}}(sm, func() {{.Facts}} { return facts }, func(o {{.Outputs}}) { out |= o; emits++ })
	table := {{.Table}}()
	for s := range {{.State}}(len({{.StateNames}})) {
		for tr := range {{.Trigger}}(len({{.TriggerNames}})) {
			for i := range 1 << len({{.FactNames}}) {
				f := {{.Facts}}(i)
				want := {{.Step}}(s, tr, f)
				state, facts, out, emits = s, f, 0, 0
				err := sm.Fire(tr)
				got := {{.Result}}{Next: state, Outputs: out, Verdict: policy.Ignored}
				switch {
				case err != nil:
					got.Verdict = policy.Rejected
				case emits == 1:
					got.Verdict = policy.Fired
				case emits > 1:
					t.Fatalf("%v in %v with facts %v: stateless emitted %d times", tr, s, f, emits)
				}
				if got != want {
					t.Fatalf("%v in %v with facts %v: {{.Step}} gives %+v, stateless %+v (error %v)", tr, s, f, want, got, err)
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
	table := {{.Table}}()
	var got, want []string
	for i, w := range table.States {
		got, want = append(got, {{.State}}(i).String()), append(want, w.Name)
	}
	for i, w := range table.Triggers {
		got, want = append(got, {{.Trigger}}(i).String()), append(want, w.Name)
	}
	for i, w := range table.Facts {
		got, want = append(got, ({{.Facts}}(1) << i).String()), append(want, w.Name)
	}
	for i, w := range table.Outputs {
		got, want = append(got, ({{.Outputs}}(1) << i).String()), append(want, w.Name)
	}
	got = append(got, {{.State}}(len(table.States)).String(), {{.Trigger}}(len(table.Triggers)).String())
	want = append(want, fmt.Sprintf("{{.State}}(%d)", len(table.States)), fmt.Sprintf("{{.Trigger}}(%d)", len(table.Triggers)))
	if !slices.Equal(got, want) {
		t.Errorf("String methods give %q, want %q", got, want)
	}
	p := {{.Policy}}
	if p.Name() != table.Name || p.Family() != table.Family || p.Initial() != table.Initial || p.Table() != table {
		t.Errorf("policy says name %q, family %q, initial %d; its table %q, %q, %d", p.Name(), p.Family(), p.Initial(), table.Name, table.Family, table.Initial)
	}
}
`))
