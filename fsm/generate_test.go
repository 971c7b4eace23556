package fsm

import (
	"bytes"
	"os"
	"testing"

	"github.com/rivus/collab/gen"
)

// TestGeneratedFilesUpToDate regenerates every spec as generate.go does and
// compares the result with the files in this directory, so that a spec
// edited without go generate fails the tests and not only `make verify`.
func TestGeneratedFilesUpToDate(t *testing.T) {
	for _, name := range []string{"turn", "lane", "lease"} {
		path := "../spec/" + name + ".fsm"
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files, err := gen.GenerateSpec(path, src, "fsm")
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		for _, f := range files {
			have, err := os.ReadFile(f.Name)
			if err != nil || !bytes.Equal(have, f.Data) {
				t.Errorf("fsm/%s is not what %s generates: run go generate ./fsm (%v)", f.Name, path, err)
			}
		}
	}
}
