package gen

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the parser, and what parses to the
// validator and the emitter: none may panic, every error must carry a
// position inside the file, and every valid spec must generate gofmt'able
// code, the same bytes twice. The seeds are the specs of testdata and the
// corpus in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"testdata/golden/*.txtar", "testdata/fail/*.txtar"} {
		for _, a := range readArchives(f, pattern) {
			f.Add(a.spec().Data)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<14 { // large inputs only slow the search down
			return
		}
		spec, err := Parse("fuzz.fsm", src)
		lines := strings.Count(string(src), "\n") + 1
		checkPositions(t, err, lines)
		if err != nil {
			return
		}
		table, err := ValidateWith(spec, lookupTestFamily)
		checkPositions(t, err, lines)
		if err != nil {
			return
		}
		a, err := Generate(table, "fuzz")
		if err != nil {
			t.Fatalf("a valid spec does not generate: %v", err)
		}
		b, _ := Generate(table, "fuzz")
		for i := range a {
			if !bytes.Equal(a[i].Data, b[i].Data) {
				t.Fatalf("%s: two runs differ", a[i].Name)
			}
		}
	})
}

// checkPositions requires err to be nil or an ErrorList whose errors lie
// inside a file of the given number of lines.
func checkPositions(t *testing.T, err error, lines int) {
	t.Helper()
	if err == nil {
		return
	}
	var list ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("want a non-empty ErrorList, got %#v", err)
	}
	for _, e := range list {
		if e.File != "fuzz.fsm" || e.Line < 1 || e.Line > lines || e.Col < 1 || e.Kind.String()[0] == 'K' {
			t.Fatalf("bad error %#v", e)
		}
	}
}
