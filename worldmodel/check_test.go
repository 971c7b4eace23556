package worldmodel

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/gen"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// doorSpec is a valid spec of no family: nothing has a world for it.
const doorSpec = `## Door opens unless it is locked.
machine Door
trigger Push
fact locked
output open
output beep
state Closed initial
state Open
Closed --Push [!locked] / open --> Open
Closed --Push [locked] / beep
Open ignore Push
`

// otherFamily is a policy that claims a family with no world model.
type otherFamily struct{ policy.Policy }

func (otherFamily) Family() string { return "door" }

func wantModelError(t *testing.T, call string, err error, family, text string) {
	t.Helper()
	var me *ModelError
	if !errors.As(err, &me) || me.Family != family || me.Field != "Policy" {
		t.Errorf("%s = %v, want a *ModelError on Policy of family %q", call, err, family)
		return
	}
	if err.Error() != text {
		t.Errorf("%s = %q, want %q", call, err, text)
	}
}

func TestModelsOfNilPolicyAreModelErrors(t *testing.T) {
	_, err := CheckPolicy(nil, modelcheck.Options{})
	wantModelError(t, "CheckPolicy(nil)", err, "", "worldmodel: Policy: nil")
	_, err = TurnModel(nil, DefaultTurnBounds())
	wantModelError(t, "TurnModel(nil)", err, "turn", "worldmodel: turn: Policy: nil")
	_, err = LaneModel(nil, DefaultLaneBounds())
	wantModelError(t, "LaneModel(nil)", err, "lane", "worldmodel: lane: Policy: nil")
	_, err = LeaseModel(nil, DefaultLeaseBounds())
	wantModelError(t, "LeaseModel(nil)", err, "lease", "worldmodel: lease: Policy: nil")
}

// tableless is a policy that carries no table.
type tableless struct{ policy.Policy }

func (tableless) Table() *policy.Table { return nil }

func TestModelsOfTablelessPolicyAreModelErrors(t *testing.T) {
	_, err := TurnModel(tableless{fsm.TurnPolicy}, DefaultTurnBounds())
	wantModelError(t, "TurnModel(tableless)", err, "turn", "worldmodel: turn: Policy: Turn has no valid table of states")
	_, err = LaneModel(tableless{fsm.LanePolicy}, DefaultLaneBounds())
	wantModelError(t, "LaneModel(tableless)", err, "lane", "worldmodel: lane: Policy: Lane has no valid table of states")
	_, err = LeaseModel(tableless{fsm.LeasePolicy}, DefaultLeaseBounds())
	wantModelError(t, "LeaseModel(tableless)", err, "lease", "worldmodel: lease: Policy: Lease has no valid table of states")
}

func TestCheckPolicyWithoutWorldModel(t *testing.T) {
	door := specPolicy(t, "specs/door.fsm", []byte(doorSpec))
	_, err := CheckPolicy(door, modelcheck.Options{})
	wantModelError(t, "CheckPolicy(Door)", err, "",
		"worldmodel: Policy: Door of spec door.fsm has no family; only the turn, lane and lease families have a world model")

	_, err = CheckPolicy(otherFamily{fsm.TurnPolicy}, modelcheck.Options{})
	wantModelError(t, "CheckPolicy(a door-family Turn)", err, "",
		`worldmodel: Policy: Turn of spec turn.fsm is of family "door", which has no world model (turn, lane and lease do)`)
}

func TestCheckSpecNamesFileAndLine(t *testing.T) {
	file := filepath.Join("specs", "door.fsm") // as given, not its base name
	tests := []struct {
		name string
		src  string
		want string
		kind gen.Kind
	}{
		{"no family", doorSpec, file + ":2:9: machine Door has no family; only the turn, lane and lease families have a world model", gen.KindFamily},
		{"unknown family", strings.Replace(doorSpec, "machine Door", "machine Door family door", 1), file + `:2:21: unknown family "door"`, gen.KindUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := CheckSpec(file, []byte(tt.src), modelcheck.Options{})
			var ge *gen.Error
			if !errors.As(err, &ge) || ge.File != file || ge.Kind != tt.kind {
				t.Fatalf("CheckSpec = %+v, %v; want a *gen.Error of kind %v naming %s", rep, err, tt.kind, file)
			}
			if err.Error() != tt.want {
				t.Errorf("CheckSpec error = %q, want %q", err, tt.want)
			}
		})
	}
}

func TestCheckSpecChecksFamilySpec(t *testing.T) {
	path := filepath.Join("..", "spec", "turn.fsm")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := CheckSpec(path, src, modelcheck.Options{MaxStates: 100})
	if err != nil {
		t.Fatalf("CheckSpec(%s): %v", path, err)
	}
	if rep.Policy != "Turn" || rep.Family != "turn" || rep.Verdict == modelcheck.Violated {
		t.Errorf("CheckSpec(%s) = %+v, want Turn of family turn, not violated", path, rep)
	}
}

// testMaxStates bounds every exploration of the tests by states, never by
// time, so that a slow or loaded machine gets the same verdicts: ten
// times what the largest default-bound world visits.
const testMaxStates = 4_000_000

// largerPrefix is how many worlds TestCheckPolicyLargerFirstStates explores
// of each larger world: every world within a few moves of the start, in
// breadth-first order. The whole of them is `make modelcheck`'s.
const largerPrefix = 150_000

// TestCheckPolicyLargerFirstStates explores the first worlds of every
// larger bound of the shipped policies and requires no violation among
// them: the exploration stops at largerPrefix states, whatever the
// machine's speed.
func TestCheckPolicyLargerFirstStates(t *testing.T) {
	for _, p := range []policy.Policy{fsm.TurnPolicy, fsm.LanePolicy, fsm.LeasePolicy} {
		reps, err := CheckPolicyLarger(p, modelcheck.Options{MaxStates: largerPrefix})
		if err != nil {
			t.Fatal(err)
		}
		if len(reps) == 0 {
			t.Fatalf("%s: no larger bounds", p.Name())
		}
		for _, rep := range reps {
			t.Log(rep.Summary)
			if rep.Verdict == modelcheck.Violated {
				t.Errorf("%s\n%s", rep.Summary, rep.Trace)
			}
		}
	}
}
