package proofofdeath_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rivus/collab/examples/proofofdeath"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
	"github.com/rivus/collab/worldmodel"
)

// TestModelChecked: the policy keeps every safety property of the lease
// world and every guarantee but the one its spec waives.
func TestModelChecked(t *testing.T) {
	p := proofofdeath.ProofLeasePolicy
	r, err := worldmodel.CheckPolicy(p, modelcheck.Options{})
	if err != nil || r.Verdict != modelcheck.Passed {
		t.Fatalf("%s, %v\n%s", r.Summary, err, r.Trace)
	}
	kept, waived := policy.Guarantees(p)
	names := func(ps []policy.Property) (n []string) {
		for _, p := range ps {
			n = append(n, p.Name)
		}
		return n
	}
	if !slices.Equal(names(waived), []string{"silentLocalTakenOver"}) || !slices.Contains(names(kept), "silentRemoteTakenOver") {
		t.Fatalf("keeps %v, waives %v", names(kept), names(waived))
	}
}

// TestWaiverIsNeeded: without its waiver the policy breaks the guarantee,
// which the checker names.
func TestWaiverIsNeeded(t *testing.T) {
	t.Parallel()
	tbl := *proofofdeath.ProofLeasePolicy.Table()
	tbl.Waived = nil
	r, err := worldmodel.CheckPolicy(policy.Compile(&tbl), modelcheck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const want = `violation of "key of a silent holder on this process table acquirable"`
	if r.Verdict != modelcheck.Violated || !strings.Contains(r.Trace+r.Summary, want) {
		t.Fatalf("%s, want a %s\n%s", r.Summary, want, r.Trace)
	}
}
