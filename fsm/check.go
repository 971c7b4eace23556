package fsm

import (
	"fmt"
	"strings"

	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// ModelError reports an argument a family's model cannot take: a policy
// of another family or shape, or bounds out of range.
type ModelError struct {
	Family string // "turn", "lane" or "lease"
	Field  string // "Policy", or the bounds field
	Reason string
}

func (e *ModelError) Error() string {
	return "fsm: " + e.Family + " model: " + e.Field + ": " + e.Reason
}

// CheckReport is the outcome of checking one policy against its family's
// world, whatever the family.
type CheckReport struct {
	Policy  string
	Family  string
	Verdict modelcheck.Verdict
	// Summary is one line: verdict, states, moves, depth, time.
	Summary string
	// Trace is the shortest counterexample, as numbered steps with the
	// world after each, when the verdict is Violated.
	Trace string
}

// CheckPolicy explores every reachable world of p's family model at the
// family's default bounds (DefaultTurnBounds, DefaultLaneBounds,
// DefaultLeaseBounds), within opts' limits. Shipped and custom policies
// alike are checked this way before they run.
func CheckPolicy(p policy.Policy, opts modelcheck.Options) (CheckReport, error) {
	switch p.Family() {
	case "turn":
		m, err := TurnModel(p, DefaultTurnBounds())
		return report(p, m, err, opts)
	case "lane":
		m, err := LaneModel(p, DefaultLaneBounds())
		return report(p, m, err, opts)
	case "lease":
		m, err := LeaseModel(p, DefaultLeaseBounds())
		return report(p, m, err, opts)
	}
	return CheckReport{}, fmt.Errorf("fsm: policy %s is of family %q, which has no world model (turn, lane and lease do)", p.Name(), p.Family())
}

func report[W comparable](p policy.Policy, m modelcheck.Model[W], err error, opts modelcheck.Options) (CheckReport, error) {
	if err != nil {
		return CheckReport{}, err
	}
	r := modelcheck.Check(m, opts)
	rep := CheckReport{Policy: p.Name(), Family: p.Family(), Verdict: r.Verdict, Summary: r.Summary()}
	if r.Violation != nil {
		var b strings.Builder
		if err := r.Violation.WriteTrace(&b, m.Format); err != nil {
			return rep, err
		}
		rep.Trace = b.String()
	}
	return rep, nil
}
