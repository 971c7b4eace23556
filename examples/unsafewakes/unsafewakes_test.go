// Package unsafewakes holds a lanes policy that collab check rejects, and
// the test that keeps its counterexample in examples/README.md true.
package unsafewakes

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/worldmodel"
)

// TestCheckRejectsIt: the model checker finds the lost wake, with the
// counterexample the README shows.
func TestCheckRejectsIt(t *testing.T) {
	src, err := os.ReadFile("lane.fsm")
	if err != nil {
		t.Fatal(err)
	}
	r, err := worldmodel.CheckSpec("lane.fsm", src, modelcheck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != modelcheck.Violated {
		t.Fatalf("%s, want a violation", r.Summary)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- counterexample: unsafewakes/lane.fsm -->\n```\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("examples/README.md shows no counterexample of unsafewakes/lane.fsm")
	}
	if got := strings.TrimRight(r.Trace, "\n"); got != strings.TrimRight(string(m[1]), "\n") {
		t.Fatalf("the README's counterexample:\n%s\ncollab check's:\n%s", m[1], got)
	}
}
