package gen

import (
	"github.com/rivus/collab/policy"
)

// lookupName returns the ID of a referenced name, reporting it if unknown.
func (v *validator) lookupName(syms symbols, id Ident) (int, bool) {
	i, ok := syms.id[id.Name]
	if !ok {
		v.errs.add(id.Pos, KindUnknown, "unknown %s %s", syms.what, id.Name)
	}
	return i, ok
}

// resolveRows turns the spec's transition lines into table rows.
func (v *validator) resolveRows() {
	v.handled = map[policy.Pair]Pos{}
	for _, r := range v.spec.Rows {
		row, ok := v.resolveRow(r)
		if !ok {
			continue
		}
		p := policy.Pair{State: row.From, Trigger: row.Trigger}
		if _, seen := v.handled[p]; !seen {
			v.handled[p] = r.From.Pos
		}
		v.table.Rows = append(v.table.Rows, row)
		v.rowPos = append(v.rowPos, r.From.Pos)
	}
}

func (v *validator) resolveRow(r RowDecl) (policy.Row, bool) {
	from, ok1 := v.lookupName(v.states, r.From)
	trig, ok2 := v.lookupName(v.triggers, r.Trigger)
	guard, ok3 := v.resolveGuard(r.Guard)
	outs, ok4 := v.resolveOutputs(r.Outputs)
	row := policy.Row{
		From: policy.StateID(from), Trigger: policy.TriggerID(trig),
		Guard: guard, Outputs: outs, To: policy.StateID(from), Internal: r.To == nil, Line: r.From.Pos.Line,
	}
	ok5 := true
	if r.To != nil {
		var to int
		to, ok5 = v.lookupName(v.states, *r.To)
		row.To = policy.StateID(to)
	}
	return row, ok1 && ok2 && ok3 && ok4 && ok5
}

func (v *validator) resolveGuard(lits []Literal) (policy.Guard, bool) {
	var g policy.Guard
	ok := true
	for _, l := range lits {
		i, known := v.lookupName(v.facts, l.Fact)
		if !known {
			ok = false
			continue
		}
		bit := policy.Facts(1) << i
		if g.Mask&bit != 0 {
			v.errs.add(l.Fact.Pos, KindDuplicate, "fact %s appears twice in one guard", l.Fact.Name)
			ok = false
			continue
		}
		g.Mask |= bit
		if !l.Negated {
			g.Want |= bit
		}
	}
	return g, ok
}

func (v *validator) resolveOutputs(names []Ident) (policy.Outputs, bool) {
	var outs policy.Outputs
	ok := true
	for _, name := range names {
		i, known := v.lookupName(v.outputs, name)
		if !known {
			ok = false
			continue
		}
		bit := policy.Outputs(1) << i
		if outs&bit != 0 {
			v.errs.add(name.Pos, KindDuplicate, "output %s listed twice", name.Name)
			ok = false
		}
		outs |= bit
	}
	return outs, ok
}

// resolveDispositions records the ignored and rejected pairs. A pair is
// disposed of once, and only if no row handles it.
func (v *validator) resolveDispositions() {
	v.dispos = map[policy.Pair]dispoUse{}
	for _, d := range v.spec.Dispositions {
		s, ok := v.lookupName(v.states, d.State)
		for _, t := range d.Triggers {
			tr, known := v.lookupName(v.triggers, t)
			if ok && known {
				v.dispose(policy.Pair{State: policy.StateID(s), Trigger: policy.TriggerID(tr)}, d, t)
			}
		}
	}
}

func (v *validator) dispose(p policy.Pair, d Disposition, t Ident) {
	verb := map[bool]string{false: "ignored", true: "rejected"}
	if prev, dup := v.dispos[p]; dup {
		kind := KindConflict
		if prev.reject == d.Reject {
			kind = KindDuplicate
		}
		v.errs.add(t.Pos, kind, "%s in %s is already %s at line %d", t.Name, d.State.Name, verb[prev.reject], prev.pos.Line)
		return
	}
	if rowPos, handled := v.handled[p]; handled {
		v.errs.add(t.Pos, KindConflict, "%s in %s is %s here but handled by the row at line %d", t.Name, d.State.Name, verb[d.Reject], rowPos.Line)
		return
	}
	v.dispos[p] = dispoUse{pos: t.Pos, reject: d.Reject}
	if d.Reject {
		v.table.Rejects = append(v.table.Rejects, p)
	} else {
		v.table.Ignores = append(v.table.Ignores, p)
	}
}
