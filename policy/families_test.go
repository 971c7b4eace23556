package policy

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

var (
	identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
	// specKeywords cannot be names in a spec, so a family may not use them.
	specKeywords = []string{"machine", "family", "trigger", "fact", "output", "state", "initial", "ignore", "reject"}
)

func TestFamiliesSortedAndNamed(t *testing.T) {
	fs := Families()
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	if want := []string{"lane", "lease", "turn"}; !slices.Equal(names, want) {
		t.Fatalf("Families() names = %v, want %v", names, want)
	}
}

func TestLookupFamily(t *testing.T) {
	for _, f := range Families() {
		got, ok := LookupFamily(f.Name)
		if !ok || got.Name != f.Name {
			t.Errorf("LookupFamily(%q) = %q, %v; want the family", f.Name, got.Name, ok)
		}
	}
	for _, name := range []string{"", "Lane", "lanes", "plock"} {
		if _, ok := LookupFamily(name); ok {
			t.Errorf("LookupFamily(%q) found a family; want none", name)
		}
	}
}

// A caller that changes the returned words must not renumber the family for
// everyone else.
func TestLookupFamilyReturnsCopies(t *testing.T) {
	f, _ := LookupFamily("lane")
	f.Triggers[0].Name = "Changed"
	f.Facts[0].Name = "changed"
	f.Outputs[0].Name = "changed"
	Families()[0].Outputs[1].Name = "changed"
	g, _ := LookupFamily("lane")
	for _, w := range [][]Word{g.Triggers[:1], g.Facts[:1], g.Outputs[:2]} {
		for _, x := range w {
			if x.Name == "Changed" || x.Name == "changed" {
				t.Errorf("a caller's change reached the family: %+v", x)
			}
		}
	}
}

func TestFamilyWords(t *testing.T) {
	for _, f := range Families() {
		t.Run(f.Name, func(t *testing.T) {
			if strings.TrimSpace(f.Doc) == "" {
				t.Error("family has no doc")
			}
			checkLimits(t, f)
			goNames := map[string]string{} // generated Go names must not collide across kinds
			for _, k := range wordKinds(f) {
				for _, w := range k.words {
					checkWord(t, k.kind, k.upper, w)
					goName := strings.ToUpper(w.Name[:1]) + w.Name[1:]
					if prev, dup := goNames[goName]; dup {
						t.Errorf("%s %q and %s share the Go name %q", k.kind, w.Name, prev, goName)
					}
					goNames[goName] = k.kind + " " + w.Name
				}
			}
		})
	}
}

type wordKind struct {
	kind  string
	upper bool // names start with an upper-case letter
	words []Word
}

func wordKinds(f Family) []wordKind {
	return []wordKind{{"trigger", true, f.Triggers}, {"fact", false, f.Facts}, {"output", false, f.Outputs}}
}

func checkLimits(t *testing.T, f Family) {
	t.Helper()
	if n := len(f.Triggers); n == 0 || n > 255 {
		t.Errorf("%d triggers, want 1 to 255", n)
	}
	if n := len(f.Facts); n > 16 {
		t.Errorf("%d facts, want at most 16 (Facts is 16 bits)", n)
	}
	if n := len(f.Outputs); n == 0 || n > 64 {
		t.Errorf("%d outputs, want 1 to 64 (Outputs is 64 bits)", n)
	}
}

func checkWord(t *testing.T, kind string, upper bool, w Word) {
	t.Helper()
	if !identRE.MatchString(w.Name) {
		t.Errorf("%s %q is not an identifier", kind, w.Name)
		return
	}
	if slices.Contains(specKeywords, w.Name) {
		t.Errorf("%s %q is a spec keyword", kind, w.Name)
	}
	if unicode.IsUpper(rune(w.Name[0])) != upper {
		t.Errorf("%s %q: want %s", kind, w.Name, map[bool]string{true: "UpperCamel", false: "lowerCamel"}[upper])
	}
	switch {
	case strings.TrimSpace(w.Doc) == "":
		t.Errorf("%s %q has no doc", kind, w.Name)
	case strings.Contains(w.Doc, "\n"):
		t.Errorf("%s %q: doc is not one line", kind, w.Name)
	case !strings.HasPrefix(w.Doc, w.Name+" ") && !strings.HasPrefix(w.Doc, w.Name+": "):
		t.Errorf("%s %q: doc %q does not start with the name", kind, w.Name, w.Doc)
	case !strings.HasSuffix(w.Doc, "."):
		t.Errorf("%s %q: doc %q is not a sentence", kind, w.Name, w.Doc)
	}
}

// The repository's specs are the reference policies of the families: each
// must declare its family's words in the family's order with the same docs,
// so that the generated tables document the family the runtime is written
// against. (The generator checks the names; this checks the docs too.)
func TestSpecsDeclareTheirFamily(t *testing.T) {
	for _, f := range Families() {
		t.Run(f.Name, func(t *testing.T) {
			file := filepath.Join("..", "spec", f.Name+".fsm")
			decl, family := scanSpec(t, file)
			if family != f.Name {
				t.Errorf("%s: machine family %q, want %q", file, family, f.Name)
			}
			for _, k := range wordKinds(f) {
				if got := decl[k.kind]; !slices.Equal(got, k.words) {
					t.Errorf("%s: %s declarations differ from the family\n got: %q\nwant: %q", file, k.kind, got, k.words)
				}
			}
		})
	}
}

// scanSpec reads the trigger, fact and output declarations of a spec with
// their `##` docs (joined by spaces), and the machine's family. It knows
// only the declaration lines; the generator parses the rest.
func scanSpec(t *testing.T, file string) (map[string][]Word, string) {
	t.Helper()
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	decl := map[string][]Word{}
	var family string
	var doc []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "##"); ok {
			doc = append(doc, strings.TrimSpace(rest))
			continue
		}
		fields := strings.Fields(strings.SplitN(line, "#", 2)[0])
		switch {
		case len(fields) >= 4 && fields[0] == "machine" && fields[2] == "family":
			family = fields[3]
		case len(fields) == 2 && (fields[0] == "trigger" || fields[0] == "fact" || fields[0] == "output"):
			decl[fields[0]] = append(decl[fields[0]], Word{Name: fields[1], Doc: strings.Join(doc, " ")})
		}
		doc = nil
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return decl, family
}
