package fsm

import (
	"os"
	"strings"
	"testing"
)

// The diagrams shown in spec/README.md are the generated ones.
func TestSpecReadmeShowsGeneratedDiagrams(t *testing.T) {
	readme, err := os.ReadFile("../spec/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"turn", "lane", "lease"} {
		mmd, err := os.ReadFile(name + ".mmd")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), "```mermaid\n"+string(mmd)+"```") {
			t.Errorf("spec/README.md does not show the current %s.mmd: paste it into its ```mermaid block", name)
		}
	}
}
