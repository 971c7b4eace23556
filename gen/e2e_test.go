package gen

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedPackages generates every golden spec into a package of a
// user's module outside this repository, then runs go vet and go test there:
// the generated code compiles, is vet-clean, and passes its own
// differential test. A spec of a test family is left out: its code names
// constants package policy has only for its own families. Those are the
// shipped specs, whose generated package fsm compiles and runs the same
// tests in this module.
func TestGeneratedPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command on generated packages")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeUserModule(t, dir, root)
	for _, a := range readArchives(t, "testdata/golden/*.txtar") {
		if testFamilies[a.family(t)].Name != "" {
			continue
		}
		pkgDir := filepath.Join(dir, a.name())
		if err := os.Mkdir(pkgDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range generateGolden(t, a) {
			if err := os.WriteFile(filepath.Join(pkgDir, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, args := range [][]string{{"vet", "./..."}, {"test", "-count=1", "./..."}} {
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = dir
		// Offline: everything the module needs is in this module's cache.
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go %v: %v\n%s", args, err, out)
		}
	}
}

// writeUserModule writes the go.mod of a module that uses this one from
// root, with this module's go.sum.
func writeUserModule(t *testing.T, dir, root string) {
	t.Helper()
	mod := "module example.com/user\n\ngo 1.26.0\n\n" +
		"require (\n\tgithub.com/qmuntal/stateless v1.7.2\n\tgithub.com/rivus/collab v0.0.0\n)\n\n" +
		"replace github.com/rivus/collab => " + filepath.ToSlash(root) + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(mod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
