package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMonitorLayerIsHonest: under the monitor layer, a monitor's report
// is a catch, a run that passes a miss, and a test that fails, a panic
// and a hang are each reported as what they were, naming the test (and
// where it hung), never as a catch.
func TestMonitorLayerIsHonest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	test := func(pkg, body string) {
		write(pkg+"/x_test.go", "package "+pkg+"\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nvar _ = os.Exit\n\n"+
			"func TestIt(t *testing.T) {\n"+body+"\n}\n\nfunc wait() { select {} }\n")
	}
	test("reports", `	os.Stderr.WriteString("lease: contract monitor: key \"k\": a duty broke\n")
	os.Exit(2)`)
	test("passes", ``)
	test("fails", `	t.Fatal("an ordinary failure")`)
	test("panics", `	panic("boom")`)
	test("hangs", `	wait()`)
	for _, tc := range []struct {
		pkg    string
		status status
		detail string
	}{
		{"reports", caught, `lease: contract monitor: key "k": a duty broke`},
		{"passes", missed, ""},
		{"fails", broken, "no monitor's report: example.com/m/fails: TestIt"},
		{"panics", broken, "no monitor's report: example.com/m/panics: TestIt, then panic in TestIt"},
		{"hangs", broken, "no monitor's report: example.com/m/hangs: hung: timed out in TestIt at example.com/m/hangs.wait("},
	} {
		lr := monitorLayer(context.Background(), dir, []string{"./" + tc.pkg}, 3*time.Second)
		if lr.status != tc.status || !strings.HasPrefix(lr.detail, tc.detail) {
			t.Errorf("%s: %v %q, want %v %q", tc.pkg, lr.status, lr.detail, tc.status, tc.detail)
		}
	}
}

// TestWithImporters: the unit layer runs the packages a mutant touches
// and those of the module that import them directly, or whose tests do
// (lease's tests run on the SQLite store), not the whole module.
func TestWithImporters(t *testing.T) {
	got, err := withImporters(context.Background(), "..", []string{"./lease/sqlite"}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"./lease/sqlite", "./cmd/collab-full", "./linearizability/torture", "./lease"} {
		if !slices.Contains(got, want) {
			t.Errorf("withImporters(./lease/sqlite) = %v, without %s", got, want)
		}
	}
	for _, not := range []string{"./lanes", "./plock", "./platform"} {
		if slices.Contains(got, not) {
			t.Errorf("withImporters(./lease/sqlite) = %v, with %s, which does not import it", got, not)
		}
	}
}

// TestMonitoredFor: the monitor layer runs the monitored packages a
// change can reach, through any chain of imports: all of them for a
// change of the platform, plock alone for plock, none for the history
// checker.
func TestMonitoredFor(t *testing.T) {
	monitored := []string{"./lease/...", "./lanes", "./plock"}
	for _, tc := range []struct {
		pkgs      []string
		want, not []string
	}{
		{[]string{"./platform"}, []string{"./lease", "./lease/leader", "./lanes", "./plock"}, nil},
		{[]string{"./plock"}, []string{"./plock"}, []string{"./lease", "./lanes"}},
		{[]string{"./linearizability"}, nil, []string{"./lease", "./lanes", "./plock"}},
		{[]string{"./internal/leasestep"}, []string{"./lease", "./lease/leader"}, nil},
	} {
		got, err := monitoredFor(context.Background(), "..", monitored, tc.pkgs)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("monitoredFor(%v) = %v, without %s", tc.pkgs, got, w)
			}
		}
		for _, n := range tc.not {
			if slices.Contains(got, n) {
				t.Errorf("monitoredFor(%v) = %v, with %s", tc.pkgs, got, n)
			}
		}
	}
}
