package gen

import (
	"path/filepath"
	"strings"

	"github.com/rivus/collab/policy"
)

// Limits of a spec, set by the widths of the policy IDs.
const (
	MaxStates   = 255
	MaxTriggers = 255
	MaxFacts    = 16
	MaxOutputs  = 64
)

// FamilyLookup finds a family's vocabulary by name, like policy.LookupFamily.
type FamilyLookup func(name string) (policy.Family, bool)

// Validate checks a parsed spec against every rule of the language, with
// families from policy.LookupFamily, and returns its numbered table. On
// error the error is an ErrorList naming every problem found.
func Validate(s *Spec) (*policy.Table, error) {
	return ValidateWith(s, policy.LookupFamily)
}

// ValidateWith is Validate with families from lookup.
func ValidateWith(s *Spec, lookup FamilyLookup) (*policy.Table, error) {
	if s.Machine == nil {
		var errs errorSink
		errs.file = s.File
		errs.add(Pos{1, 1}, KindSyntax, "missing machine declaration: a spec starts with `machine Name`")
		return nil, errs.err()
	}
	v := &validator{spec: s, lookup: lookup, errs: errorSink{file: s.File}}
	return v.run()
}

// validator checks one spec and builds its table as it goes.
type validator struct {
	spec   *Spec
	lookup FamilyLookup
	errs   errorSink
	table  *policy.Table
	family *policy.Family // nil outside a family, or for an unknown one

	states   symbols
	triggers symbols
	facts    symbols
	outputs  symbols

	rowPos  []Pos                    // position of each table row
	handled map[policy.Pair]Pos      // pairs with rows: the first row's position
	dispos  map[policy.Pair]dispoUse // ignored and rejected pairs
}

// dispoUse is where and how a pair was disposed of.
type dispoUse struct {
	pos    Pos
	reject bool
}

// symbols maps names of one kind to their IDs and declarations.
type symbols struct {
	what  string // "state", "trigger", ...
	id    map[string]int
	decls []Decl // indexed by ID
}

func (v *validator) run() (*policy.Table, error) {
	m := v.spec.Machine
	v.table = &policy.Table{Name: m.Name.Name, Doc: m.Doc, Family: m.Family.Name, Spec: filepath.Base(v.spec.File)}
	steps := []func(){v.declare, v.checkGoNames, v.checkLimits, v.checkInitial, v.resolveRows, v.resolveDispositions, v.resolveWaivers}
	for _, step := range steps {
		step()
	}
	if len(v.errs.list) > 0 { // the rules below need a fully resolved table
		return nil, v.errs.err()
	}
	for _, rule := range []func(){v.checkUnused, v.checkReachable, v.checkDeterministic, v.checkTotal} {
		rule()
	}
	if err := v.errs.err(); err != nil {
		return nil, err
	}
	return v.table, nil
}

// declare numbers the vocabulary: states in declaration order, the rest in
// the family's order for a family spec and in declaration order otherwise.
func (v *validator) declare() {
	states := make([]Decl, len(v.spec.States))
	for i, s := range v.spec.States {
		states[i] = s.Decl
	}
	v.states = v.declareKind("state", states, nil)
	var fam *policy.Family
	if f := v.spec.Machine.Family; f.Name != "" {
		family, ok := v.lookup(f.Name)
		if !ok {
			v.errs.add(f.Pos, KindUnknown, "unknown family %q", f.Name)
		} else {
			fam = &family
		}
	}
	v.family = fam
	var famTriggers, famFacts, famOutputs []policy.Word
	if fam != nil {
		famTriggers, famFacts, famOutputs = fam.Triggers, fam.Facts, fam.Outputs
	}
	v.triggers = v.declareKind("trigger", v.spec.Triggers, famTriggers)
	v.facts = v.declareKind("fact", v.spec.Facts, famFacts)
	v.outputs = v.declareKind("output", v.spec.Outputs, famOutputs)
	v.table.States = words(v.states.decls)
	v.table.Triggers = words(v.triggers.decls)
	v.table.Facts = words(v.facts.decls)
	v.table.Outputs = words(v.outputs.decls)
}

// declareKind numbers the declarations of one kind and reports duplicates.
// With a family vocabulary (non-nil family), the declarations must name
// exactly the family's words, and take the family's order and, where the
// spec has none, its docs.
func (v *validator) declareKind(what string, decls []Decl, family []policy.Word) symbols {
	syms := symbols{what: what, id: map[string]int{}}
	byName := map[string]Decl{}
	for _, d := range decls {
		if prev, dup := byName[d.Name.Name]; dup {
			v.errs.add(d.Name.Pos, KindDuplicate, "%s %s declared twice (first at line %d)", what, d.Name.Name, prev.Name.Pos.Line)
			continue
		}
		byName[d.Name.Name] = d
		if family == nil {
			syms.id[d.Name.Name] = len(syms.decls)
			syms.decls = append(syms.decls, d)
		}
	}
	if family != nil {
		syms.decls = v.familyOrder(what, decls, byName, family)
		for i, d := range syms.decls {
			syms.id[d.Name.Name] = i
		}
	}
	return syms
}

// familyOrder orders a family spec's declarations like the family and
// reports words missing on either side.
func (v *validator) familyOrder(what string, decls []Decl, byName map[string]Decl, family []policy.Word) []Decl {
	fam := v.spec.Machine.Family
	inFamily := map[string]bool{}
	var ordered []Decl
	for _, w := range family {
		inFamily[w.Name] = true
		d, ok := byName[w.Name]
		if !ok {
			v.errs.add(fam.Pos, KindFamily, "family %s has %s %s, which the spec does not declare", fam.Name, what, w.Name)
			continue
		}
		if d.Doc == "" {
			d.Doc = w.Doc
		}
		ordered = append(ordered, d)
	}
	for _, d := range decls {
		if !inFamily[d.Name.Name] {
			v.errs.add(d.Name.Pos, KindFamily, "%s %s is not in family %s", what, d.Name.Name, fam.Name)
			ordered = append(ordered, d) // numbered all the same, so uses of it are not "unknown"
		}
	}
	return ordered
}

func words(decls []Decl) []policy.Word {
	ws := make([]policy.Word, len(decls))
	for i, d := range decls {
		ws[i] = policy.Word{Name: d.Name.Name, Doc: d.Doc}
	}
	return ws
}

// checkGoNames reports two names that would get one Go identifier, so that
// every valid spec generates code that compiles.
func (v *validator) checkGoNames() {
	n := newGoNames(v.spec.Machine.Name.Name, v.spec.Machine.Family.Name)
	taken := map[string]string{}
	for _, name := range n.fixed() {
		taken[name] = "the generated " + name
	}
	claim := func(goName, what string, d Decl) {
		if prev, dup := taken[goName]; dup {
			if prev == what+" "+d.Name.Name {
				return // declared twice: declareKind reports it
			}
			v.errs.add(d.Name.Pos, KindDuplicate, "%s %s has the Go name %s, as does %s", what, d.Name.Name, goName, prev)
			return
		}
		taken[goName] = what + " " + d.Name.Name
	}
	for _, s := range v.spec.States {
		claim(n.state(s.Name.Name), "state", s.Decl)
	}
	kinds := []struct {
		what  string
		decls []Decl
		name  func(string) string
	}{
		{"trigger", v.spec.Triggers, n.trigger},
		{"fact", v.spec.Facts, n.fact},
		{"output", v.spec.Outputs, n.output},
	}
	for _, k := range kinds {
		for _, d := range k.decls {
			claim(k.name(d.Name.Name), k.what, d)
		}
	}
}

func (v *validator) checkLimits() {
	limits := []struct {
		what  string
		decls []Decl
		max   int
	}{
		{"states", v.states.decls, MaxStates},
		{"triggers", v.triggers.decls, MaxTriggers},
		{"facts", v.facts.decls, MaxFacts},
		{"outputs", v.outputs.decls, MaxOutputs},
	}
	for _, l := range limits {
		if len(l.decls) > l.max {
			v.errs.add(l.decls[l.max].Name.Pos, KindLimit, "too many %s: %d, at most %d", l.what, len(l.decls), l.max)
		}
	}
}

func (v *validator) checkInitial() {
	var first *StateDecl
	for i := range v.spec.States {
		s := &v.spec.States[i]
		if !s.Initial {
			continue
		}
		if first != nil {
			v.errs.add(s.Name.Pos, KindInitial, "second initial state %s (the first is %s at line %d)", s.Name.Name, first.Name.Name, first.Name.Pos.Line)
			continue
		}
		first = s
		v.table.Initial = policy.StateID(v.states.id[s.Name.Name])
	}
	if first == nil {
		v.errs.add(v.spec.Machine.Name.Pos, KindInitial, "no initial state: mark exactly one state `initial`")
	}
}

// resolveWaivers checks that each waive line names a guarantee of the
// spec's family, once, and lists it in the table with its reason. Safety
// properties cannot be waived: the runtime's promises rest on them.
func (v *validator) resolveWaivers() {
	seen := map[string]int{}
	for _, w := range v.spec.Waivers {
		name := w.Name.Name
		if line, dup := seen[name]; dup {
			v.errs.add(w.Name.Pos, KindDuplicate, "guarantee %s waived twice (first at line %d)", name, line)
			continue
		}
		seen[name] = w.Name.Pos.Line
		if v.spec.Machine.Family.Name == "" {
			v.errs.add(w.Name.Pos, KindWaiver, "waive %s: only a family's policy can waive a guarantee, since only a family's world checks them", name)
			continue
		}
		if v.family == nil {
			continue // the unknown family is reported already
		}
		p, ok := v.family.Property(name)
		switch {
		case !ok:
			v.errs.add(w.Name.Pos, KindWaiver, "family %s has no property %s; its guarantees are %s", v.family.Name, name, strings.Join(v.family.Guarantees(), ", "))
		case !p.Guarantee:
			v.errs.add(w.Name.Pos, KindWaiver, "%s (%q) is a safety property of family %s, which no policy may waive; its guarantees are %s", name, p.Invariant, v.family.Name, strings.Join(v.family.Guarantees(), ", "))
		case w.Doc == "":
			v.errs.add(w.Name.Pos, KindWaiver, "waive %s has no doc comment: say on the line above (##) why the policy gives it up", name)
		default:
			v.table.Waived = append(v.table.Waived, policy.Word{Name: name, Doc: w.Doc})
		}
	}
}
