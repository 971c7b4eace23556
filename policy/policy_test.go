package policy

import (
	"fmt"
	"testing"
)

// door is a small table: Closed --Push [!locked] / open --> Open,
// Closed --Push [locked] / ring (internal), Open ignore Push, Closed reject Pull.
var door = &Table{
	Name:     "Door",
	States:   []Word{{Name: "Closed"}, {Name: "Open"}},
	Triggers: []Word{{Name: "Push"}, {Name: "Pull"}},
	Facts:    []Word{{Name: "locked"}},
	Outputs:  []Word{{Name: "ring"}, {Name: "open"}},
	Rows: []Row{
		{From: 0, Trigger: 0, Guard: Guard{Mask: 1}, Outputs: 2, To: 1, Line: 1},
		{From: 0, Trigger: 0, Guard: Guard{Mask: 1, Want: 1}, Outputs: 1, To: 0, Internal: true, Line: 2},
		{From: 1, Trigger: 1, To: 0, Line: 3},
	},
	Ignores: []Pair{{State: 1, Trigger: 0}},
	Rejects: []Pair{{State: 0, Trigger: 1}},
}

func TestTableStep(t *testing.T) {
	tests := []struct {
		s    StateID
		t    TriggerID
		f    Facts
		want Result
	}{
		{0, 0, 0, Result{Next: 1, Outputs: 2, Verdict: Fired}},
		{0, 0, 1, Result{Next: 0, Outputs: 1, Verdict: Fired}},
		{0, 0, 2, Result{Next: 1, Outputs: 2, Verdict: Fired}}, // an unknown fact bit is not read
		{1, 0, 1, Result{Next: 1, Verdict: Ignored}},
		{0, 1, 0, Result{Next: 0, Verdict: Rejected}},
		{1, 1, 0, Result{Next: 0, Verdict: Fired}},
		{7, 0, 0, Result{Next: 7, Verdict: Rejected}}, // no such state
	}
	for _, tt := range tests {
		if got := door.Step(tt.s, tt.t, tt.f); got != tt.want {
			t.Errorf("Step(%d, %d, %d) = %+v, want %+v", tt.s, tt.t, tt.f, got, tt.want)
		}
	}
}

func TestStepAllocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { door.Step(0, 0, 1) }); n != 0 {
		t.Errorf("Table.Step allocates %v times", n)
	}
}

func TestGuardHolds(t *testing.T) {
	g := Guard{Mask: 0b101, Want: 0b001} // [a, !c]
	for f, want := range map[Facts]bool{0b001: true, 0b011: true, 0b000: false, 0b101: false, 0b100: false} {
		if got := g.Holds(f); got != want {
			t.Errorf("Holds(%03b) = %v, want %v", f, got, want)
		}
	}
	if !(Guard{}).Holds(0xffff) {
		t.Error("the zero guard does not hold")
	}
}

func TestTableLookups(t *testing.T) {
	if id, ok := door.State("Open"); !ok || id != 1 {
		t.Errorf("State(Open) = %d, %v", id, ok)
	}
	if id, ok := door.Trigger("Pull"); !ok || id != 1 {
		t.Errorf("Trigger(Pull) = %d, %v", id, ok)
	}
	if bit, ok := door.Fact("locked"); !ok || bit != 1 {
		t.Errorf("Fact(locked) = %d, %v", bit, ok)
	}
	if bit, ok := door.Output("open"); !ok || bit != 2 {
		t.Errorf("Output(open) = %d, %v", bit, ok)
	}
	if _, ok := door.State("Ajar"); ok {
		t.Error("State(Ajar) found")
	}
	if _, ok := door.Fact("nope"); ok {
		t.Error("Fact(nope) found")
	}
	if _, ok := door.Output("nope"); ok {
		t.Error("Output(nope) found")
	}
}

func TestStrings(t *testing.T) {
	names := []string{"a", "b", "c"}
	tests := []struct{ got, want string }{
		{Fired.String(), "fired"},
		{Ignored.String(), "ignored"},
		{Rejected.String(), "rejected"},
		{Verdict(0).String(), "Verdict(0)"},
		{Verdict(9).String(), "Verdict(9)"},
		{FormatID(1, names, "T"), "b"},
		{FormatID(3, names, "T"), "T(3)"},
		{FormatID(-1, names, "T"), "T(-1)"},
		{FormatBits(0, names, "S"), "0"},
		{FormatBits(0b101, names, "S"), "a|c"},
		{FormatBits(0b11010, names, "S"), "b|S(0x18)"},
		{FormatBits(1<<63, names, "S"), "S(0x8000000000000000)"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

func TestHas(t *testing.T) {
	if !Facts(0b110).Has(0b100) || Facts(0b110).Has(0b101) {
		t.Error("Facts.Has")
	}
	if !Outputs(0b110).Has(0b110) || Outputs(0b010).Has(0b110) {
		t.Error("Outputs.Has")
	}
}

// Step a policy's table: a trigger the spec handles, ignores, or rejects.
func ExampleTable_Step() {
	for _, c := range []struct {
		s StateID
		t TriggerID
		f Facts
	}{{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {0, 1, 0}} {
		r := door.Step(c.s, c.t, c.f)
		fmt.Printf("%s in %s: %s, now %s, outputs %s\n", door.Triggers[c.t].Name, door.States[c.s].Name,
			r.Verdict, door.States[r.Next].Name, FormatBits(uint64(r.Outputs), []string{"ring", "open"}, "Outputs"))
	}
	// Output:
	// Push in Closed: fired, now Open, outputs open
	// Push in Closed: fired, now Closed, outputs ring
	// Push in Open: ignored, now Open, outputs 0
	// Pull in Closed: rejected, now Closed, outputs 0
}
