package gen

import "fmt"

// Pos is a position in a spec file: 1-based line and byte column.
type Pos struct {
	Line int
	Col  int
}

// String returns "line:col".
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Ident is a name as written in the spec, with its position.
type Ident struct {
	Name string
	Pos  Pos
}

// Spec is a parsed spec file: one machine, its declarations in file order,
// and its transitions. Parse builds it; Validate checks and numbers it.
type Spec struct {
	File         string // file name as given to Parse; errors name it
	Machine      *MachineDecl
	States       []StateDecl
	Triggers     []Decl
	Facts        []Decl
	Outputs      []Decl
	Rows         []RowDecl
	Dispositions []Disposition
	// Waivers are the `waive guarantee` lines: guarantees of the family
	// that the policy gives up, each with its doc saying why.
	Waivers []Decl
}

// MachineDecl is the `machine Name [family name]` line.
type MachineDecl struct {
	Name   Ident
	Doc    string
	Family Ident // Name is "" without a family clause
}

// Decl declares a trigger, fact or output.
type Decl struct {
	Name Ident
	Doc  string
}

// StateDecl declares a state.
type StateDecl struct {
	Decl
	Initial bool
}

// Literal is one fact of a guard, possibly negated.
type Literal struct {
	Fact    Ident
	Negated bool
}

// String returns "fact" or "!fact".
func (l Literal) String() string {
	if l.Negated {
		return "!" + l.Fact.Name
	}
	return l.Fact.Name
}

// RowDecl is one transition line: From --Trigger [guard] / outputs --> To.
type RowDecl struct {
	From    Ident
	Trigger Ident
	Guard   []Literal
	Outputs []Ident
	To      *Ident // nil for an internal transition
}

// Disposition is a `State ignore A, B` or `State reject A, B` line.
type Disposition struct {
	State    Ident
	Reject   bool
	Triggers []Ident
}
