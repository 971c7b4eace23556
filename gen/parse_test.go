package gen

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseSpec(t *testing.T) {
	src := "## Lane doc,\n## two lines.\nmachine Lane family lane # trailing comment\n\n" +
		"## detached by the blank line\n\n" +
		"## Wake doc.\ntrigger Wake\r\n" +
		"### a banner, not a doc\nfact slotFree\noutput start\n" +
		"state Idle initial\nstate Running\n" +
		"Idle --Wake [slotFree, !queueRoom] / start, started --> Running\n" +
		"Idle --Wake\n" +
		"Running reject Wake, Cancel\n"
	spec, err := Parse("lane.fsm", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := &Spec{
		File: "lane.fsm",
		Machine: &MachineDecl{
			Name: Ident{"Lane", Pos{3, 9}}, Doc: "Lane doc,\ntwo lines.", Family: Ident{"lane", Pos{3, 21}},
		},
		States: []StateDecl{
			{Decl: Decl{Name: Ident{"Idle", Pos{12, 7}}}, Initial: true},
			{Decl: Decl{Name: Ident{"Running", Pos{13, 7}}}},
		},
		Triggers: []Decl{{Name: Ident{"Wake", Pos{8, 9}}, Doc: "Wake doc."}},
		Facts:    []Decl{{Name: Ident{"slotFree", Pos{10, 6}}}},
		Outputs:  []Decl{{Name: Ident{"start", Pos{11, 8}}}},
		Rows: []RowDecl{
			{
				From: Ident{"Idle", Pos{14, 1}}, Trigger: Ident{"Wake", Pos{14, 8}},
				Guard:   []Literal{{Fact: Ident{"slotFree", Pos{14, 14}}}, {Fact: Ident{"queueRoom", Pos{14, 25}}, Negated: true}},
				Outputs: []Ident{{"start", Pos{14, 38}}, {"started", Pos{14, 45}}},
				To:      &Ident{"Running", Pos{14, 57}},
			},
			{From: Ident{"Idle", Pos{15, 1}}, Trigger: Ident{"Wake", Pos{15, 8}}},
		},
		Dispositions: []Disposition{
			{State: Ident{"Running", Pos{16, 1}}, Reject: true, Triggers: []Ident{{"Wake", Pos{16, 16}}, {"Cancel", Pos{16, 22}}}},
		},
	}
	if !reflect.DeepEqual(spec, want) {
		t.Errorf("Parse gives\n%#v\nwant\n%#v", spec, want)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		src  string
		want string // the first error
	}{
		{"", "x.fsm:1:1: missing machine declaration: a spec starts with `machine Name`"},
		{"machine", "x.fsm:1:8: expected machine name, found end of line"},
		{"machine M family", "x.fsm:1:17: expected family name, found end of line"},
		{"machine M\nstate 9", "x.fsm:2:7: expected state name, found illegal character '9'"},
		{"machine M\nstate A initial yes", "x.fsm:2:17: unexpected \"yes\""},
		{"machine M\nA --", "x.fsm:2:5: expected trigger name, found end of line"},
		{"machine M\nA --Go [a b]", "x.fsm:2:11: expected ',' or ']' in guard, found \"b\""},
		{"machine M\nA --Go [a", "x.fsm:2:10: expected ',' or ']' in guard, found end of line"},
		{"machine M\nA --Go / a,", "x.fsm:2:12: expected output name, found end of line"},
		{"machine M\nA --Go --> ", "x.fsm:2:12: expected target state, found end of line"},
		{"machine M\nA ignore", "x.fsm:2:9: expected trigger name, found end of line"},
		{"machine M\nA", "x.fsm:2:2: expected '--Trigger', 'ignore' or 'reject' after \"A\", found end of line"},
		{"machine M\n[", "x.fsm:2:1: expected a declaration or a transition, found '['"},
		{"machine M\nfact reject", "x.fsm:2:6: \"reject\" is a keyword and cannot be a name"},
		{"machine M\nA ---> B", "x.fsm:2:5: expected trigger name, found illegal character '-'"},
		{"machine M\nA --Go é", "x.fsm:2:8: unexpected illegal character 'é'"},
		{"machine M\nA --Go \xff", "x.fsm:2:8: unexpected illegal character '\\xff'"},
		{"machine M\n## a \xff", "x.fsm:2:6: doc comment holds invalid UTF-8 byte 0xff, which Go comments cannot"},
		{"machine M\n## a\x00", "x.fsm:2:5: doc comment holds control character U+0000, which Go comments cannot"},
		{"machine M\n  ## \uFEFF", "x.fsm:2:6: doc comment holds a byte order mark, which Go comments cannot"},
	}
	for _, tt := range tests {
		_, err := Parse("x.fsm", []byte(tt.src))
		var list ErrorList
		if !errors.As(err, &list) {
			t.Errorf("Parse(%q): want an ErrorList, got %v", tt.src, err)
			continue
		}
		if got := list[0].Error(); got != tt.want {
			t.Errorf("Parse(%q):\n got %s\nwant %s", tt.src, got, tt.want)
		}
		if list[0].Kind != KindSyntax {
			t.Errorf("Parse(%q): kind %v, want syntax", tt.src, list[0].Kind)
		}
	}
}

func TestParseSkipsBOMAndKeepsReplacementCharacter(t *testing.T) {
	spec, err := Parse("x.fsm", []byte("\uFEFF## \uFFFD and \t tab\nmachine M"))
	if err != nil || spec.Machine.Doc != "\uFFFD and \t tab" {
		t.Errorf("Parse: doc %q, error %v", spec.Machine.Doc, err)
	}
}

func TestErrorList(t *testing.T) {
	list := ErrorList{
		{File: "a.fsm", Line: 1, Col: 2, Kind: KindUnknown, Msg: "one"},
		{File: "a.fsm", Line: 3, Col: 4, Kind: KindUnused, Msg: "two"},
	}
	if got, want := list.Error(), "a.fsm:1:2: one (and 1 more errors)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := list[:1].Error(), "a.fsm:1:2: one"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var e *Error
	if err := error(list); !errors.As(err, &e) || e != list[0] {
		t.Errorf("errors.As finds %v, want the first error", e)
	}
	if got := Kind(99).String(); got != "Kind(99)" {
		t.Errorf("Kind(99) = %q", got)
	}
}
