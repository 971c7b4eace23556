package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenErrorsSayWhatAndWhere: a path that cannot hold a lock or a
// store is refused with its name and the cause, not SQLite's code alone.
func TestOpenErrorsSayWhatAndWhere(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	garbage := filepath.Join(dir, "garbage")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(garbage, []byte("not a database, not at all; "+strings.Repeat("x", 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nodir", "x")
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"lock", sub, "--", "true"}, []string{sub, "is a directory"}},
		{[]string{"lock", "status", sub}, []string{sub, "is a directory"}},
		{[]string{"lock", missing, "--", "true"}, []string{filepath.Dir(missing), "no such file or directory"}},
		{[]string{"lock", garbage, "--", "true"}, []string{garbage, "not a database"}},
		{[]string{"lock", "status", garbage}, []string{garbage, "not a database"}},
		{[]string{"lease", "run", "--store", sub, "--key", "k", "--", "true"}, []string{sub, "is a directory"}},
		{[]string{"lease", "run", "--store", missing, "--key", "k", "--", "true"}, []string{missing, "no such file or directory"}},
		{[]string{"lease", "run", "--store", garbage, "--key", "k", "--", "true"}, []string{garbage, "not a database"}},
		{[]string{"gen", "-out", garbage, filepath.Join("..", "..", "spec", "lease.fsm")}, []string{garbage, "not a directory"}},
	} {
		code, _, errOut := runCLI(t, "", tt.args...)
		if code == 0 {
			t.Errorf("collab %q succeeded", tt.args)
		}
		for _, w := range tt.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("collab %q: stderr %q does not say %q", tt.args, errOut, w)
			}
		}
	}
}
