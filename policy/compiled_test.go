package policy_test

import (
	"testing"

	"github.com/rivus/collab/policy"
)

// door is a small hand-written table: Closed --Push [!locked] / open --> Open,
// Closed --Push [locked] / ring, Open --Shut --> Closed, Open ignores Push,
// Closed rejects Shut.
func door() *policy.Table {
	return &policy.Table{
		Name:     "Door",
		Initial:  0,
		States:   []policy.Word{{Name: "Closed"}, {Name: "Open"}},
		Triggers: []policy.Word{{Name: "Push"}, {Name: "Shut"}},
		Facts:    []policy.Word{{Name: "locked"}},
		Outputs:  []policy.Word{{Name: "open"}, {Name: "ring"}},
		Rows: []policy.Row{
			{From: 0, Trigger: 0, Guard: policy.Guard{Mask: 1, Want: 0}, Outputs: 1, To: 1},
			{From: 0, Trigger: 0, Guard: policy.Guard{Mask: 1, Want: 1}, Outputs: 2, To: 0, Internal: true},
			{From: 1, Trigger: 1, To: 0},
		},
		Ignores: []policy.Pair{{State: 1, Trigger: 0}},
		Rejects: []policy.Pair{{State: 0, Trigger: 1}},
	}
}

func TestCompileAgreesWithTableStep(t *testing.T) {
	tbl := door()
	p := policy.Compile(tbl)
	if p.Name() != "Door" || p.Initial() != 0 || p.Table() != tbl {
		t.Fatalf("compiled policy does not describe its table")
	}
	// Every state and trigger, including out-of-range IDs, and every fact value.
	for s := policy.StateID(0); s < 4; s++ {
		for tr := policy.TriggerID(0); tr < 4; tr++ {
			for f := policy.Facts(0); f < 2; f++ {
				if got, want := p.Step(s, tr, f), tbl.Step(s, tr, f); got != want {
					t.Errorf("Step(%d, %d, %d) = %+v, table says %+v", s, tr, f, got, want)
				}
			}
		}
	}
	if r := p.Step(0, 0, 1); r.Verdict != policy.Fired || r.Outputs != 2 || r.Next != 0 {
		t.Errorf("locked push = %+v, want ring and stay", r)
	}
	if r := p.Step(1, 0, 0); r.Verdict != policy.Ignored {
		t.Errorf("push when open = %+v, want ignored", r)
	}
	if r := p.Step(0, 1, 0); r.Verdict != policy.Rejected {
		t.Errorf("shut when closed = %+v, want rejected", r)
	}
}
