package gen

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// TestFailingSpecs checks the errors of each spec in testdata/fail against
// the archive's "errors" file, one "kind: file:line:col: message" a line.
// An archive's name starts with the kind it tests, and every kind has one.
func TestFailingSpecs(t *testing.T) {
	covered := map[Kind]bool{}
	for _, a := range readArchives(t, "testdata/fail/*.txtar") {
		kind := kindNamed(strings.Split(a.name(), "-")[0])
		if kind == 0 {
			t.Fatalf("%s: the name does not start with an error kind", a.path)
		}
		t.Run(a.name(), func(t *testing.T) {
			got := failingErrors(t, a)
			covered[kind] = true
			if *update {
				a.rewrite(t, []txtar.File{{Name: "errors", Data: got}})
				return
			}
			if want, _ := a.file("errors"); !bytes.Equal(got, want) {
				t.Errorf("errors differ at %s", firstDiff(got, want))
			}
			if !bytes.Contains(got, []byte(kind.String()+": ")) {
				t.Errorf("no error of kind %s", kind)
			}
		})
	}
	for k := KindSyntax; k <= KindWaiver; k++ {
		if !covered[k] {
			t.Errorf("no failing spec tests kind %s", k)
		}
	}
}

// failingErrors compiles the archive's spec, requires it to fail with an
// ErrorList of positioned errors, and formats them.
func failingErrors(t *testing.T, a archive) []byte {
	t.Helper()
	spec := a.spec()
	_, err := compile(spec.Name, spec.Data)
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("want an ErrorList, got %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e != list[0] {
		t.Errorf("errors.As does not find the first *Error")
	}
	var b bytes.Buffer
	for _, e := range list {
		if e.File != spec.Name || e.Line < 1 || e.Col < 1 {
			t.Errorf("bad position in %#v", e)
		}
		b.WriteString(e.Kind.String() + ": " + e.Error() + "\n")
	}
	return b.Bytes()
}

func kindNamed(name string) Kind {
	for k := KindSyntax; k <= KindWaiver; k++ {
		if k.String() == name {
			return k
		}
	}
	return 0
}
