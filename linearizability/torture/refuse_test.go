package torture

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/gen"
)

// tree returns every file and directory under dir, by path relative to
// dir, with the files' contents.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || d.IsDir() {
			files[rel] = "(directory)"
			return err
		}
		b, err := os.ReadFile(path)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// configError fails t unless err is a *ConfigError of field, and
// returns it.
func configError(t *testing.T, err error, field string) *ConfigError {
	t.Helper()
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != field {
		t.Fatalf("error %v, want a *ConfigError of %s", err, field)
	}
	return ce
}

// TestRunRefusesUsedDir runs a campaign in a directory Run creates, then
// another in the same directory: the second must be refused at once as
// a *ConfigError of Dir, leaving the first run's files as they were.
func TestRunRefusesUsedDir(t *testing.T) {
	cfg := smallConfig(t, StoreSQLite)
	cfg.Dir = filepath.Join(t.TempDir(), "new", "run") // missing: Run creates it
	cfg.Duration, cfg.MinKills, cfg.MinPauses = 500*time.Millisecond, 0, 0
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(cfg.Dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the run directory Run made: %v, %v; want mode 0700", st.Mode(), err)
	}
	before := tree(t, cfg.Dir)
	if _, ok := before[filepath.Join(historyDir, "p0.jsonl")]; !ok {
		t.Fatalf("the first run left no controller history: %v", before)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // ends a campaign run by mistake
	defer cancel()
	res, err := Run(ctx, cfg)
	ce := configError(t, err, "Dir")
	if res != nil || !strings.Contains(ce.Error(), "is not empty") || !strings.Contains(ce.Error(), cfg.Dir) {
		t.Errorf("Run = %v, %q; want no result and an error saying %s is not empty", res, ce, cfg.Dir)
	}
	t.Log(ce)
	after := tree(t, cfg.Dir)
	for name, b := range before {
		if after[name] != b {
			t.Errorf("the second run changed %s", name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("the second run made %s", name)
		}
	}
}

// TestRunRefusesDirFile: a Dir that is a file is a *ConfigError of Dir,
// and the file is left alone.
func TestRunRefusesDirFile(t *testing.T) {
	cfg := smallConfig(t, StoreSQLite)
	cfg.Dir = filepath.Join(cfg.Dir, "file")
	if err := os.WriteFile(cfg.Dir, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), cfg)
	configError(t, err, "Dir")
	if b, rerr := os.ReadFile(cfg.Dir); rerr != nil || string(b) != "mine" {
		t.Errorf("the file is now %q, %v", b, rerr)
	}
}

// writeSpec writes a lease spec file of src and returns its path.
func writeSpec(t *testing.T, name, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigValidatePolicies: a spec of Policies that the workers would
// refuse (missing, not parsing, of another family) is a *ConfigError of
// Policies carrying the spec's own error; good specs pass.
func TestConfigValidatePolicies(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.fsm")
	bad := writeSpec(t, "bad.fsm", "machine Lease\nthis is not a spec\n")
	for _, tc := range []struct {
		name     string
		policies []string
		want     []string // in the error
	}{
		{"missing", []string{"", missing}, []string{"[1]: ", missing, "no such file"}},
		{"syntax", []string{bad}, []string{"[0]: " + bad + ":2:"}},
		{"family", []string{mutation("lane-cancel-silent")}, []string{"[0]: ", `family "lane"; want "lease"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{Dir: "run", Policies: tc.policies}.WithDefaults()
			ce := configError(t, c.Validate(), "Policies")
			for _, w := range tc.want {
				if !strings.Contains(ce.Error(), w) {
					t.Errorf("error %q lacks %q", ce, w)
				}
			}
			t.Log(ce)
		})
	}
	t.Run("syntax position", func(t *testing.T) {
		c := Config{Dir: "run", Policies: []string{bad}}.WithDefaults()
		var ge *gen.Error
		if err := c.Validate(); !errors.As(err, &ge) || ge.File != bad || ge.Line != 2 {
			t.Errorf("Validate() = %v, want a *gen.Error at %s:2", err, bad)
		}
	})
	t.Run("good", func(t *testing.T) {
		c := Config{Dir: "run", Policies: []string{"", mutation("lease-fence-without-reread"), mutation("lease-takeover-before-ttl")}}.WithDefaults()
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRunRefusesBadPolicy: Run with a spec the workers would refuse
// fails before starting any (before making Dir), as a *ConfigError.
func TestRunRefusesBadPolicy(t *testing.T) {
	cfg := smallConfig(t, StoreSQLite)
	cfg.Dir = filepath.Join(cfg.Dir, "run")
	cfg.Policies = []string{writeSpec(t, "bad.fsm", "machine Lease\nthis is not a spec\n")}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // ends a campaign run by mistake
	defer cancel()
	_, err := Run(ctx, cfg)
	configError(t, err, "Policies")
	if _, serr := os.Stat(cfg.Dir); !errors.Is(serr, fs.ErrNotExist) {
		t.Errorf("Run made %s (%v)", cfg.Dir, serr)
	}
}
