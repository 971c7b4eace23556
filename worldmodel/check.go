package worldmodel

import (
	"fmt"
	"strings"

	"github.com/rivus/collab/gen"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// ModelError reports an argument a family's model cannot take: a nil
// policy, a policy of another family or shape, or bounds out of range.
type ModelError struct {
	// Family is the model's family, "turn", "lane" or "lease"; it is ""
	// when CheckPolicy finds no model for the policy (nil, or of a family
	// without one).
	Family string
	Field  string // "Policy", or the bounds field
	Reason string
}

func (e *ModelError) Error() string {
	if e.Family == "" {
		return "worldmodel: " + e.Field + ": " + e.Reason
	}
	return "worldmodel: " + e.Family + ": " + e.Field + ": " + e.Reason
}

// CheckReport is the outcome of checking one policy against its family's
// world, whatever the family.
type CheckReport struct {
	Policy  string
	Family  string
	Verdict modelcheck.Verdict
	// Summary is one line a world: verdict, states, moves, depth, time.
	Summary string
	// Trace is the shortest counterexample, as numbered steps with the
	// world after each, when the verdict is Violated.
	Trace string
}

// CheckPolicy explores every reachable world of p's family model at the
// family's default bounds (DefaultTurnBounds, DefaultLaneBounds, and for
// a lease DefaultLeaseBounds, then BatchLeaseBounds), within opts'
// limits; a lease policy's report is that of the first world that does
// not pass, else both summaries, a line each. Shipped and custom policies
// alike are checked this way before they run. A nil p, or one of no family
// or of a family without a world model, is a *ModelError on Policy; for a
// policy compiled from a spec it names the spec's base name (CheckSpec
// names the file as given, and the line).
func CheckPolicy(p policy.Policy, opts modelcheck.Options) (CheckReport, error) {
	if p == nil {
		return CheckReport{}, &ModelError{Field: "Policy", Reason: "nil"}
	}
	switch p.Family() {
	case "turn":
		reps, err := reportEach(p, []TurnBounds{DefaultTurnBounds()}, TurnModel, opts)
		return joinReports(reps), err
	case "lane":
		reps, err := reportEach(p, []LaneBounds{DefaultLaneBounds()}, LaneModel, opts)
		return joinReports(reps), err
	case "lease":
		reps, err := reportEach(p, []LeaseBounds{DefaultLeaseBounds(), BatchLeaseBounds()}, LeaseModel, opts)
		return joinReports(reps), err
	}
	name := p.Name()
	if t := p.Table(); t != nil && t.Spec != "" {
		name += " of spec " + t.Spec
	}
	return CheckReport{}, &ModelError{Field: "Policy", Reason: noModel(name, p.Family())}
}

// CheckPolicyLarger checks p beyond its family's default bounds, at the
// bounds listed below, one report each. These explorations take minutes
// rather than seconds, so `make modelcheck` runs them (collab check
// --larger) and `go test` explores them only up to a number of states.
//
//   - turn: TurnMaxTasks tasks, another process taking the lock once;
//   - lane: 4 keys, 2 slots, MaxQueued 3;
//   - lease: 4 holders on one process table and 2 generations; 3 holders,
//     a fourth on another process table, and 3 generations; 2 holders,
//     the second on another process table, the first on a second key too,
//     and 2 generations; each with failures, ambiguous saves, pauses and
//     crashes.
func CheckPolicyLarger(p policy.Policy, opts modelcheck.Options) ([]CheckReport, error) {
	if p == nil {
		return nil, &ModelError{Field: "Policy", Reason: "nil"}
	}
	switch p.Family() {
	case "turn":
		return reportEach(p, LargerTurnBounds(), TurnModel, opts)
	case "lane":
		return reportEach(p, LargerLaneBounds(), LaneModel, opts)
	case "lease":
		return reportEach(p, LargerLeaseBounds(), LeaseModel, opts)
	}
	_, err := CheckPolicy(p, opts) // the same *ModelError for a policy without a model
	return nil, err
}

// joinReports is the report of several worlds of one policy: the first
// that does not pass, else all their summaries, a line each.
func joinReports(reps []CheckReport) CheckReport {
	var sums []string
	for _, r := range reps {
		if r.Verdict != modelcheck.Passed {
			return r
		}
		sums = append(sums, r.Summary)
	}
	if len(reps) == 0 {
		return CheckReport{}
	}
	r := reps[0]
	r.Summary = strings.Join(sums, "\n")
	return r
}

// reportEach checks p in the world of each bounds, stopping at the first
// error.
func reportEach[B any, W comparable](p policy.Policy, bounds []B, model func(policy.Policy, B) (modelcheck.Model[W], error), opts modelcheck.Options) ([]CheckReport, error) {
	var reps []CheckReport
	for _, b := range bounds {
		rep, err := report(p, func(p policy.Policy) (modelcheck.Model[W], error) { return model(p, b) }, opts)
		if err != nil {
			return reps, err
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

// LargerTurnBounds returns the turn bounds of CheckPolicyLarger.
func LargerTurnBounds() []TurnBounds {
	return []TurnBounds{{Tasks: TurnMaxTasks, OtherTakes: 1, Symmetric: true}}
}

// LargerLaneBounds returns the lane bounds of CheckPolicyLarger.
func LargerLaneBounds() []LaneBounds {
	return []LaneBounds{{Keys: 4, MaxConcurrent: 2, MaxQueued: 3}}
}

// LargerLeaseBounds returns the lease bounds of CheckPolicyLarger.
func LargerLeaseBounds() []LeaseBounds {
	return []LeaseBounds{
		{Holders: 4, Generations: 2, Failures: true, Ambiguous: true, Pauses: true, Crashes: true},
		{Holders: 3, Remote: 1, Generations: 3, Failures: true, Ambiguous: true, Pauses: true, Crashes: true},
		{Holders: 2, Remote: 1, Generations: 2, Failures: true, Ambiguous: true, Pauses: true, Crashes: true, SecondKey: true},
	}
}

// checkTable requires p to carry a table holding its initial state: the
// world models read state names and counts from it.
func checkTable(family string, p policy.Policy) error {
	if t := p.Table(); t == nil || len(t.States) == 0 || int(p.Initial()) >= len(t.States) {
		return &ModelError{family, "Policy", p.Name() + " has no valid table of states"}
	}
	return nil
}

// noModel says that the policy called name, of family fam, has no world
// model.
func noModel(name, fam string) string {
	if fam == "" {
		return name + " has no family; only the turn, lane and lease families have a world model"
	}
	return fmt.Sprintf("%s is of family %q, which has no world model (turn, lane and lease do)", name, fam)
}

// CheckSpec parses and validates the spec src read from file, as
// gen.GenerateSpec does, and checks its policy as CheckPolicy does. Its
// errors about the spec are those of SpecPolicy.
func CheckSpec(file string, src []byte, opts modelcheck.Options) (CheckReport, error) {
	p, err := SpecPolicy(file, src)
	if err != nil {
		return CheckReport{}, err
	}
	return CheckPolicy(p, opts)
}

// SpecPolicy parses and validates the spec src read from file and compiles
// it into a policy of a family with a world model. Its errors about the
// spec are a gen.ErrorList naming file as given, with line and column:
// those of gen.Parse and gen.Validate, and a gen.KindFamily error at the
// machine line for a spec of no family or of a family without a world
// model.
func SpecPolicy(file string, src []byte) (policy.Policy, error) {
	spec, err := gen.Parse(file, src)
	if err != nil {
		return nil, err
	}
	t, err := gen.Validate(spec)
	if err != nil {
		return nil, err
	}
	switch t.Family {
	case "turn", "lane", "lease":
		return policy.Compile(t), nil
	}
	m := spec.Machine
	pos := m.Family.Pos
	if m.Family.Name == "" {
		pos = m.Name.Pos
	}
	return nil, gen.ErrorList{{File: file, Line: pos.Line, Col: pos.Col, Kind: gen.KindFamily,
		Msg: "machine " + noModel(m.Name.Name, t.Family)}}
}

// report checks p in the world that build makes of it; a violation's
// trace names, under each step, the spec rows that fired.
func report[W comparable](p policy.Policy, build func(policy.Policy) (modelcheck.Model[W], error), opts modelcheck.Options) (CheckReport, error) {
	m, err := build(p)
	if err != nil {
		return CheckReport{}, err
	}
	r := modelcheck.Check(m, opts)
	rep := CheckReport{Policy: p.Name(), Family: p.Family(), Verdict: r.Verdict, Summary: r.Summary()}
	if r.Violation != nil {
		rows, err := traceRows(p, build, r.Violation.Trace)
		if err != nil {
			return rep, err
		}
		rep.Trace = writeTrace(r.Violation, p.Table(), m.Format, rows)
	}
	return rep, nil
}
