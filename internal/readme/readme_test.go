// Package readme keeps the Go snippets of the README equal to the
// runnable examples they are copied from, so that they compile and do
// what their output says (go test runs the examples themselves).
package readme

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module's directory, from this package's.
const root = "../.."

// snippet is a Go block of the README and the example it shows.
var snippet = regexp.MustCompile("(?s)<!-- example: (\\S+) (\\w+) -->\n```go\n(.*?)\n```")

func TestSnippetsAreTheExamples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	found := snippet.FindAllSubmatch(readme, -1)
	if len(found) < 4 {
		t.Fatalf("the README shows %d examples, want one for each of plock, lease, lanes and leader", len(found))
	}
	for _, m := range found {
		file, name, shown := string(m[1]), string(m[2]), string(m[3])
		body, err := exampleBody(filepath.Join(root, file), name)
		if err != nil {
			t.Errorf("%s %s: %v", file, name, err)
			continue
		}
		if body != shown {
			t.Errorf("the README's %s differs from its body in %s:\n--- README\n%s\n--- %s\n%s", name, file, shown, file, body)
		}
	}
}

// exampleBody returns the statements of function name in file, unindented
// by one tab, as the README shows them.
func exampleBody(file, name string) (string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != name || fn.Recv != nil {
			continue
		}
		start, end := fset.Position(fn.Body.Lbrace).Offset+1, fset.Position(fn.Body.Rbrace).Offset
		lines := strings.Split(strings.Trim(string(src[start:end]), "\n"), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, "\t")
		}
		return strings.Join(lines, "\n"), nil
	}
	return "", os.ErrNotExist
}
