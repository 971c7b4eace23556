package worldmodel

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rivus/collab/modelcheck"
)

// TestTraceNamesSpecRows: a counterexample's last step names the spec row
// that broke the property, at its line, with the facts it was given; the
// initial world, which no step led to, names none.
func TestTraceNamesSpecRows(t *testing.T) {
	const file = "testdata/mutations/lease-silent-holder-held.fsm"
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const row = "Acquiring --Loaded [!recordFree, !holderDead, ttlElapsed] / heldError --> Idle"
	line := 0
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Join(strings.Fields(l), " ") == row {
			line = i + 1
		}
	}
	if line == 0 {
		t.Fatalf("%s has no row %q", file, row)
	}
	rep, err := CheckSpec(file, src, modelcheck.Options{})
	if err != nil || rep.Verdict != modelcheck.Violated {
		t.Fatalf("%s, %v", rep.Summary, err)
	}
	heads := regexp.MustCompile(`(?m)^ *[0-9]+\. `).FindAllStringIndex(rep.Trace, -1)
	last := rep.Trace[heads[len(heads)-1][0]:]
	want := "| lease-silent-holder-held.fsm:" + strconv.Itoa(line) + ": " + row + " (facts: ttlElapsed, holderLocal)"
	if !strings.Contains(last, want) {
		t.Fatalf("the last step does not name the row that broke the guarantee:\n%s\nwant %q", last, want)
	}
	if first := rep.Trace[heads[0][0]:heads[1][0]]; strings.Contains(first, "| ") {
		t.Errorf("the initial world names a row:\n%s", first)
	}
}
