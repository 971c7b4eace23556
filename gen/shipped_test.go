package gen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivus/collab/policy"
)

// TestShippedFilesUpToDate regenerates every shipped spec into package fsm,
// and the families' vocabulary into package policy, as their generate.go
// files do, and compares the result with the committed files, so that a
// spec or family edited without go generate fails the tests and not only
// `make verify`.
func TestShippedFilesUpToDate(t *testing.T) {
	for _, name := range []string{"turn", "lane", "lease"} {
		path := "../spec/" + name + ".fsm"
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files, err := GenerateSpec(path, src, "fsm")
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		for _, f := range files {
			requireFile(t, filepath.Join("..", "fsm", f.Name), f.Data, "go generate ./fsm")
		}
	}
	vocab, err := GenerateVocabulary(policy.Families())
	if err != nil {
		t.Fatal(err)
	}
	requireFile(t, filepath.Join("..", "policy", vocab.Name), vocab.Data, "go generate ./policy")
}

func requireFile(t *testing.T, path string, want []byte, fix string) {
	t.Helper()
	have, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(have, want) {
		t.Errorf("%s is not what the generator writes: run %s (%v)", filepath.ToSlash(path), fix, err)
	}
}

// The diagrams shown in spec/README.md are the generated ones.
func TestSpecReadmeShowsGeneratedDiagrams(t *testing.T) {
	readme, err := os.ReadFile("../spec/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"turn", "lane", "lease"} {
		mmd, err := os.ReadFile(filepath.Join("..", "fsm", name+".mmd"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), "```mermaid\n"+string(mmd)+"```") {
			t.Errorf("spec/README.md does not show the current %s.mmd: paste it into its ```mermaid block", name)
		}
	}
}
