package gen

import (
	"math/bits"
	"strings"

	"github.com/rivus/collab/policy"
)

// checkUnused reports declared triggers, facts and outputs that nothing
// uses. A family spec is exempt: its family fixes the vocabulary.
func (v *validator) checkUnused() {
	if v.table.Family != "" {
		return
	}
	var facts policy.Facts
	var outs policy.Outputs
	triggers := make([]bool, len(v.triggers.decls))
	for _, r := range v.table.Rows {
		facts |= r.Guard.Mask
		outs |= r.Outputs
		triggers[r.Trigger] = true
	}
	for p := range v.dispos {
		triggers[p.Trigger] = true
	}
	for i, d := range v.triggers.decls {
		if !triggers[i] {
			v.errs.add(d.Name.Pos, KindUnused, "trigger %s is declared but no row, ignore or reject uses it", d.Name.Name)
		}
	}
	for i, d := range v.facts.decls {
		if facts&(1<<i) == 0 {
			v.errs.add(d.Name.Pos, KindUnused, "fact %s is declared but no guard reads it", d.Name.Name)
		}
	}
	for i, d := range v.outputs.decls {
		if outs&(1<<i) == 0 {
			v.errs.add(d.Name.Pos, KindUnused, "output %s is declared but no row emits it", d.Name.Name)
		}
	}
}

// checkReachable reports states that no sequence of rows leads to from the
// initial state.
func (v *validator) checkReachable() {
	seen := make([]bool, len(v.states.decls))
	seen[v.table.Initial] = true
	queue := []policy.StateID{v.table.Initial}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, r := range v.table.Rows {
			if r.From == s && !seen[r.To] {
				seen[r.To] = true
				queue = append(queue, r.To)
			}
		}
	}
	initial := v.states.decls[v.table.Initial].Name.Name
	for i, d := range v.states.decls {
		if !seen[i] {
			v.errs.add(d.Name.Pos, KindUnreachable, "state %s is not reachable from the initial state %s", d.Name.Name, initial)
		}
	}
}

// checkDeterministic reports two rows of one state and trigger whose guards
// can hold together: two guards conflict unless they require opposite values
// of some fact.
func (v *validator) checkDeterministic() {
	rows := v.table.Rows
	for j := range rows {
		for i := range j {
			a, b := rows[i], rows[j]
			if a.From != b.From || a.Trigger != b.Trigger {
				continue
			}
			common := a.Guard.Mask & b.Guard.Mask
			if (a.Guard.Want^b.Guard.Want)&common != 0 {
				continue
			}
			both := policy.Guard{Mask: a.Guard.Mask | b.Guard.Mask, Want: a.Guard.Want | b.Guard.Want}
			v.errs.add(v.rowPos[j], KindNondeterministic, "in %s, %s fires both this row and the row at line %d %s",
				v.stateName(b.From), v.triggerName(b.Trigger), a.Line, v.describeGuard(both))
		}
	}
}

// checkTotal reports each state and trigger that is neither ignored nor
// rejected and whose rows leave a fact assignment unhandled, with the first
// such assignment.
func (v *validator) checkTotal() {
	for s := range v.states.decls {
		for t := range v.triggers.decls {
			p := policy.Pair{State: policy.StateID(s), Trigger: policy.TriggerID(t)}
			if _, ok := v.dispos[p]; ok {
				continue
			}
			v.checkPairTotal(p)
		}
	}
}

func (v *validator) checkPairTotal(p policy.Pair) {
	state, trigger := v.stateName(p.State), v.triggerName(p.Trigger)
	pos, handled := v.handled[p]
	if !handled {
		if v.table.Family == "" && !v.triggerUsed(p.Trigger) {
			return // checkUnused reports the trigger once
		}
		v.errs.add(v.states.decls[p.State].Name.Pos, KindIncomplete,
			"state %s does not handle trigger %s: add a row, or `%s ignore %s`, or `%s reject %s`",
			state, trigger, state, trigger, state, trigger)
		return
	}
	var guards []policy.Guard
	var union policy.Facts
	for _, r := range v.table.Rows {
		if r.From == p.State && r.Trigger == p.Trigger {
			guards = append(guards, r.Guard)
			union |= r.Guard.Mask
		}
	}
	if gap, ok := uncovered(guards, union); ok {
		v.errs.add(pos, KindIncomplete, "in %s, no row handles %s %s: add a row, or cover it with the guards",
			state, trigger, v.describeGuard(policy.Guard{Mask: union, Want: gap}))
	}
}

// uncovered returns the first assignment of the facts in union that no
// guard holds for, enumerating the subsets of union in increasing order.
func uncovered(guards []policy.Guard, union policy.Facts) (policy.Facts, bool) {
	for x := policy.Facts(0); ; x = (x - union) & union {
		held := false
		for _, g := range guards {
			if g.Holds(x) {
				held = true
				break
			}
		}
		if !held {
			return x, true
		}
		if x == union {
			return 0, false
		}
	}
}

func (v *validator) triggerUsed(t policy.TriggerID) bool {
	for _, r := range v.table.Rows {
		if r.Trigger == t {
			return true
		}
	}
	for p := range v.dispos {
		if p.Trigger == t {
			return true
		}
	}
	return false
}

func (v *validator) stateName(s policy.StateID) string     { return v.table.States[s].Name }
func (v *validator) triggerName(t policy.TriggerID) string { return v.table.Triggers[t].Name }

// describeGuard writes a fact assignment as the guard that selects it:
// "when [a, !b]", or "whatever the facts" for the empty guard.
func (v *validator) describeGuard(g policy.Guard) string {
	if g.Mask == 0 {
		return "whatever the facts"
	}
	lits := make([]string, 0, bits.OnesCount16(uint16(g.Mask)))
	for i, f := range v.table.Facts {
		bit := policy.Facts(1) << i
		switch {
		case g.Mask&bit == 0:
		case g.Want&bit != 0:
			lits = append(lits, f.Name)
		default:
			lits = append(lits, "!"+f.Name)
		}
	}
	return "when [" + strings.Join(lits, ", ") + "]"
}
