package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const validSpec = `machine Toggle
trigger Flip
state Up initial
state Down
Up --Flip --> Down
Down --Flip --> Up
`

const invalidSpec = `machine Broken
trigger Flip
state Up initial
state Down
Up --Flip --> Nowhere
Down --Flop --> Up
`

// writeSpec writes a spec file into dir and returns its path.
func writeSpec(t *testing.T, dir, name, src string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runCmd(args ...string) (int, string) {
	var stderr bytes.Buffer
	code := run(args, &stderr)
	return code, stderr.String()
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestRunWritesFiles(t *testing.T) {
	dir := t.TempDir()
	spec := writeSpec(t, dir, "toggle.fsm", validSpec)
	out := filepath.Join(dir, "toggle")
	if code, stderr := runCmd("-spec", spec, "-out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []string{"toggle.dot", "toggle.mmd", "toggle_gen.go", "toggle_gen_test.go"}
	if got := listDir(t, out); !slices.Equal(got, want) {
		t.Fatalf("wrote %v, want %v", got, want)
	}
	code, err := os.ReadFile(filepath.Join(out, "toggle_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(code, []byte("\npackage toggle\n")) {
		t.Errorf("the package is not named after the output directory")
	}
	if bytes.Contains(code, []byte(dir)) {
		t.Errorf("generated code mentions the machine's paths")
	}
}

func TestRunLeavesUpToDateFilesAlone(t *testing.T) {
	dir := t.TempDir()
	spec := writeSpec(t, dir, "toggle.fsm", validSpec)
	if code, stderr := runCmd("-out", dir, "-pkg", "p", spec); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	gen := filepath.Join(dir, "toggle_gen.go")
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(gen, old, old); err != nil {
		t.Fatal(err)
	}
	if code, stderr := runCmd("-out", dir, "-pkg", "p", spec); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(gen); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("an up-to-date file was rewritten (%v)", err)
	}
	if code, stderr := runCmd("-out", dir, "-pkg", "q", spec); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(gen); err != nil || fi.ModTime().Equal(old) {
		t.Errorf("a changed file was not rewritten (%v)", err)
	}
}

func TestRunReportsSpecErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeSpec(t, dir, "toggle.fsm", validSpec)
	bad := writeSpec(t, dir, "broken.fsm", invalidSpec)
	out := filepath.Join(dir, "out")
	code, stderr := runCmd("-out", out, "-pkg", "p", "-spec", good, "-spec", bad)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	want := bad + ":5:15: unknown state Nowhere\n" + bad + ":6:8: unknown trigger Flop\n"
	if stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}
	if got := listDir(t, out); len(got) != 0 {
		t.Errorf("wrote %v although a spec is invalid", got)
	}
}

func TestRunUsageErrors(t *testing.T) {
	dir := t.TempDir()
	spec := writeSpec(t, dir, "toggle.fsm", validSpec)
	same := writeSpec(t, dir, "again.fsm", strings.Replace(validSpec, "state Down", "state Down\n## another spec, same machine", 1))
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "no spec files"},
		{[]string{"-nosuchflag"}, 2, "flag provided but not defined"},
		{[]string{"-pkg", "not-a-name", spec}, 2, `package name "not-a-name" is not a Go identifier`},
		{[]string{"-pkg", "p", "-out", dir, filepath.Join(dir, "missing.fsm")}, 1, "missing.fsm: no such file"},
		{[]string{"-pkg", "p", "-out", dir, spec, same}, 1, "both generate toggle_gen.go"},
	}
	for _, tt := range tests {
		code, stderr := runCmd(tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.msg) {
			t.Errorf("fsmgen %q: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, tt.code, tt.msg)
		}
	}
}
