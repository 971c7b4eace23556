package policy

// Table is a policy's transition table as plain data: the vocabulary with
// docs, the rows in spec order, and the explicitly ignored and rejected
// (state, trigger) pairs.
type Table struct {
	Name   string // machine name
	Doc    string // machine doc comment
	Family string // family name, "" if none
	Spec   string // base name of the spec file the table was generated from

	Initial  StateID
	States   []Word // indexed by StateID
	Triggers []Word // indexed by TriggerID
	Facts    []Word // fact i is bit i of Facts
	Outputs  []Word // output i is bit i of Outputs

	Rows    []Row
	Ignores []Pair // triggers ignored in a state
	Rejects []Pair // triggers rejected in a state

	// Waived are the guarantees of the family (Family.Properties) that
	// the policy gives up, each with the spec's reason as its Doc: the
	// family's world checks every other property.
	Waived []Word
}

// Waives reports whether the policy gives up the guarantee named name.
func (t *Table) Waives(name string) bool {
	for _, w := range t.Waived {
		if w.Name == name {
			return true
		}
	}
	return false
}

// Row is one transition of a table.
type Row struct {
	From     StateID
	Trigger  TriggerID
	Guard    Guard
	Outputs  Outputs
	To       StateID
	Internal bool // no exit or entry: To equals From and the state is not re-entered
	Line     int  // line of the row in the spec
}

// Guard is a conjunction of fact literals: it holds for facts f when
// f&Mask == Want. The zero Guard always holds.
type Guard struct {
	Mask Facts // the facts the guard reads
	Want Facts // their required values; Want&^Mask is zero
}

// Holds reports whether the guard holds for facts f.
func (g Guard) Holds(f Facts) bool { return f&g.Mask == g.Want }

// Pair names a trigger in a state.
type Pair struct {
	State   StateID
	Trigger TriggerID
}

// Step interprets the table: the first row from s on t whose guard holds
// fires; otherwise an ignored pair is Ignored, and anything else Rejected.
// For a validated table at most one row can hold, and generated Step
// functions are tested against this one.
func (t *Table) Step(s StateID, tr TriggerID, f Facts) Result {
	for i := range t.Rows {
		r := &t.Rows[i]
		if r.From == s && r.Trigger == tr && r.Guard.Holds(f) {
			return Result{Next: r.To, Outputs: r.Outputs, Verdict: Fired}
		}
	}
	p := Pair{State: s, Trigger: tr}
	for _, q := range t.Ignores {
		if q == p {
			return Result{Next: s, Verdict: Ignored}
		}
	}
	return Result{Next: s, Verdict: Rejected}
}

// State returns the ID of the state named name.
func (t *Table) State(name string) (StateID, bool) {
	i, ok := index(t.States, name)
	return StateID(i), ok
}

// Trigger returns the ID of the trigger named name.
func (t *Table) Trigger(name string) (TriggerID, bool) {
	i, ok := index(t.Triggers, name)
	return TriggerID(i), ok
}

// Fact returns the bit of the fact named name.
func (t *Table) Fact(name string) (Facts, bool) {
	i, ok := index(t.Facts, name)
	if !ok {
		return 0, false
	}
	return 1 << i, true
}

// Output returns the bit of the output named name.
func (t *Table) Output(name string) (Outputs, bool) {
	i, ok := index(t.Outputs, name)
	if !ok {
		return 0, false
	}
	return 1 << i, true
}

func index(words []Word, name string) (int, bool) {
	for i, w := range words {
		if w.Name == name {
			return i, true
		}
	}
	return 0, false
}
