package worldmodel

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// TestPropertiesNameEveryInvariant: each world checks exactly the
// properties its family lists, so that a spec's waiver and collab check's
// list name what the world checks.
func TestPropertiesNameEveryInvariant(t *testing.T) {
	lease, err := LeaseModel(fsm.LeasePolicy, DefaultLeaseBounds())
	if err != nil {
		t.Fatal(err)
	}
	lane, err := LaneModel(fsm.LanePolicy, DefaultLaneBounds())
	if err != nil {
		t.Fatal(err)
	}
	turn, err := TurnModel(fsm.TurnPolicy, DefaultTurnBounds())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		family string
		names  []string
	}{
		{"lease", invariantNames(lease.Invariants, lease.Moves)},
		{"lane", invariantNames(lane.Invariants, lane.Moves)},
		{"turn", invariantNames(turn.Invariants, turn.Moves)},
	} {
		fam, _ := policy.LookupFamily(tc.family)
		var want []string
		for _, p := range fam.Properties {
			want = append(want, p.Invariant)
			if p.Name == "" || p.Doc == "" {
				t.Errorf("%s: property %q has no name or doc", tc.family, p.Invariant)
			}
		}
		slices.Sort(want)
		if slices.Sort(tc.names); !slices.Equal(tc.names, want) {
			t.Errorf("%s world checks\n%q\nits family lists\n%q", tc.family, tc.names, want)
		}
	}
}

func invariantNames[W comparable](invs []modelcheck.Invariant[W], moves []modelcheck.MoveInvariant[W]) []string {
	var names []string
	for _, inv := range invs {
		names = append(names, inv.Name)
	}
	for _, inv := range moves {
		names = append(names, inv.Name)
	}
	return names
}

// localSilentHeld is the shipped lease spec changed so that a holder on
// this process table is taken over only on proof of death, never for
// silence; one on another process table still is after the TTL.
func localSilentHeld(t *testing.T, waiver string) policy.Policy {
	t.Helper()
	src, err := os.ReadFile("../spec/lease.fsm")
	if err != nil {
		t.Fatal(err)
	}
	old := []byte("Acquiring  --Loaded [!recordFree, !holderDead, ttlElapsed] / claim\n")
	if !bytes.Contains(src, old) {
		t.Fatal("the shipped spec has no silent takeover row to change")
	}
	src = bytes.Replace(src, old, []byte("Acquiring  --Loaded [!recordFree, !holderDead, ttlElapsed, !holderLocal] / claim\n"+
		"Acquiring  --Loaded [!recordFree, !holderDead, ttlElapsed, holderLocal] / heldError --> Idle\n"), 1)
	src = append(src, waiver...)
	return specPolicy(t, "lease.fsm", src)
}

// TestWaivedGuaranteeIsNotChecked: a policy that keeps a silent holder of
// this process table breaks that guarantee, with a counterexample; with
// the guarantee waived in its spec, its world passes, and still checks
// every other property (a remote silent holder is taken over).
func TestWaivedGuaranteeIsNotChecked(t *testing.T) {
	r := leaseRun(leaseModelOf(t, localSilentHeld(t, ""), DefaultLeaseBounds(), true))
	if r.Verdict != modelcheck.Violated || r.Violation.Property != leaseInvSilentLocal {
		t.Fatalf("without the waiver: %s, want a violation of %q", r.Summary(), leaseInvSilentLocal)
	}
	p := localSilentHeld(t, "## A live holder here is only ever taken over on proof of death.\nwaive silentLocalTakenOver\n")
	m := leaseModelOf(t, p, DefaultLeaseBounds(), true)
	if r := leaseRun(m); r.Verdict != modelcheck.Passed {
		t.Fatalf("with the waiver: %s", r.Summary())
	}
	names := invariantNames(m.Invariants, m.Moves)
	if slices.Contains(names, leaseInvSilentLocal) || !slices.Contains(names, leaseInvSilentRemote) {
		t.Errorf("with the waiver the world checks %q", names)
	}
}
