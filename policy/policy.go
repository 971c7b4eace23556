package policy

import "strconv"

// SupportPackageIsVersion1 is referenced by generated code so that a file
// generated for another version of this package fails to compile instead of
// misbehaving.
const SupportPackageIsVersion1 = true

// StateID numbers a policy's states in the order its spec declares them.
type StateID uint8

// TriggerID numbers a policy's triggers: in the family's order for a family
// policy, in declaration order otherwise.
type TriggerID uint8

// Facts holds the facts the runtime observed when it fired a trigger: bit i
// is fact i, numbered like triggers.
type Facts uint16

// Has reports whether every fact set in x is set in f.
func (f Facts) Has(x Facts) bool { return f&x == x }

// Outputs holds the effects a step asks the runtime to carry out: bit i is
// output i, numbered like triggers.
type Outputs uint64

// Has reports whether every output set in x is set in o.
func (o Outputs) Has(x Outputs) bool { return o&x == x }

// Verdict says how a policy handled a trigger. The zero Verdict is invalid,
// so a Result that no Step produced is never mistaken for one that fired.
type Verdict uint8

const (
	// Fired means a row of the table handled the trigger: Result.Next and
	// Result.Outputs are the row's (Next may equal the current state).
	Fired Verdict = iota + 1
	// Ignored means the spec ignores the trigger in this state: the state is
	// unchanged and there are no outputs.
	Ignored
	// Rejected means the spec rejects the trigger in this state: the state is
	// unchanged, there are no outputs, and the caller reports an error.
	Rejected
)

var verdictNames = [...]string{Fired: "fired", Ignored: "ignored", Rejected: "rejected"}

// String returns "fired", "ignored" or "rejected", and "Verdict(n)" for any
// other value.
func (v Verdict) String() string {
	if int(v) < len(verdictNames) && verdictNames[v] != "" {
		return verdictNames[v]
	}
	return "Verdict(" + strconv.Itoa(int(v)) + ")"
}

// Result is the answer of one step. It is a small value: stepping allocates
// nothing.
type Result struct {
	Next    StateID
	Outputs Outputs
	Verdict Verdict
}

// Policy is a state machine policy: pure, deterministic and total over its
// states and triggers. Implementations are generated; they are safe for
// concurrent use because they hold no state.
type Policy interface {
	// Name is the machine's name as its spec declares it.
	Name() string
	// Family is the family whose vocabulary the policy uses, or "" for a
	// policy of its own vocabulary.
	Family() string
	// Initial is the state a new instance starts in.
	Initial() StateID
	// Step returns the next state and outputs for trigger t fired in state s
	// with facts f, or a Result whose Verdict says it was ignored or rejected.
	Step(s StateID, t TriggerID, f Facts) Result
	// Table returns the transition table as data. Callers must not modify it.
	Table() *Table
}
