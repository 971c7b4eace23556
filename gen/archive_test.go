package gen

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rivus/collab/policy"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the expected outputs in testdata/golden and testdata/fail")

// testFamilies is the family vocabulary the tests use, so that they do not
// depend on the project's families.
var testFamilies = map[string]policy.Family{
	"switch": {
		Name:     "switch",
		Doc:      "A lamp switch.",
		Triggers: []policy.Word{{Name: "On", Doc: "On turns the lamp on."}, {Name: "Off", Doc: "Off turns it off."}, {Name: "Tick", Doc: "Tick is the clock."}},
		Facts:    []policy.Word{{Name: "powered", Doc: "powered: mains power is present."}},
		Outputs:  []policy.Word{{Name: "light", Doc: "light lights the lamp."}, {Name: "dark", Doc: "dark darkens it."}, {Name: "beep", Doc: "beep sounds once."}},
		Properties: []policy.Property{
			{Name: "noFlicker", Invariant: "the lamp never flickers", Doc: "The lamp changes at most once a tick."},
			{Name: "answersOn", Invariant: "on lights the lamp", Doc: "On with power lights the lamp.", Guarantee: true},
		},
	},
}

func lookupTestFamily(name string) (policy.Family, bool) {
	f, ok := testFamilies[name]
	return f, ok
}

// compile parses and validates src with the test families.
func compile(file string, src []byte) (*policy.Table, error) {
	spec, err := Parse(file, src)
	if err != nil {
		return nil, err
	}
	return ValidateWith(spec, lookupTestFamily)
}

// archive is a txtar test case: a spec and the files expected from it.
type archive struct {
	path string
	ar   *txtar.Archive
}

// readArchives reads the txtar files matching pattern; the first file of
// each must be the spec.
func readArchives(t testing.TB, pattern string) []archive {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no test archives match %s (%v)", pattern, err)
	}
	var out []archive
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(ar.Files) == 0 || !strings.HasSuffix(ar.Files[0].Name, ".fsm") {
			t.Fatalf("%s: the first file must be the .fsm spec", p)
		}
		out = append(out, archive{path: p, ar: ar})
	}
	return out
}

func (a archive) name() string { return strings.TrimSuffix(filepath.Base(a.path), ".txtar") }

func (a archive) spec() txtar.File { return a.ar.Files[0] }

// file returns the data of the named file and whether it exists.
func (a archive) file(name string) ([]byte, bool) {
	for _, f := range a.ar.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// rewrite replaces everything after the spec with files and writes the
// archive back.
func (a archive) rewrite(t testing.TB, files []txtar.File) {
	t.Helper()
	a.ar.Files = append([]txtar.File{a.spec()}, files...)
	if err := os.WriteFile(a.path, txtar.Format(a.ar), 0o644); err != nil {
		t.Fatal(err)
	}
}

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return "no difference"
}

// family returns the family of the archive's spec, "" for none.
func (a archive) family(t testing.TB) string {
	t.Helper()
	spec := a.spec()
	table, err := compile(spec.Name, spec.Data)
	if err != nil {
		t.Fatal(err)
	}
	return table.Family
}
