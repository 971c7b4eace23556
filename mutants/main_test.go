package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestParseMutant(t *testing.T) {
	text := "lease/sqlite: a bug\ndiff --git a/lease/sqlite/sqlite.go b/lease/sqlite/sqlite.go\n--- a/lease/sqlite/sqlite.go\n+++ b/lease/sqlite/sqlite.go\n" +
		"diff --git a/spec/lane.fsm b/spec/lane.fsm\n"
	m, err := parseMutant("x", text)
	if err != nil {
		t.Fatal(err)
	}
	if m.desc != "lease/sqlite: a bug" {
		t.Errorf("desc = %q", m.desc)
	}
	if want := []string{"lease/sqlite/sqlite.go", "spec/lane.fsm"}; !slices.Equal(m.files, want) {
		t.Errorf("files = %q, want %q", m.files, want)
	}
	if want := []string{"./fsm", "./lanes", "./lease/sqlite"}; !slices.Equal(m.tests, want) {
		t.Errorf("tests = %q, want %q", m.tests, want)
	}
	if !m.changesSpec() || m.needsPostgres() {
		t.Errorf("changesSpec %v, needsPostgres %v", m.changesSpec(), m.needsPostgres())
	}
	for _, bad := range []string{"diff --git a/x b/x\n", "\ndiff --git a/x b/x\n", "no diff here\n"} {
		if _, err := parseMutant("bad", bad); err == nil {
			t.Errorf("parseMutant(%q) accepted it", bad)
		}
	}
}

// TestShippedMutants checks that every patch of this directory has a
// description and a diff, and still applies to the code beside it: a
// change that makes one stale fails here, in seconds, not an hour later
// in make mutants.
func TestShippedMutants(t *testing.T) {
	ms, err := loadMutants(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 15 {
		t.Errorf("%d mutants, want at least 15", len(ms))
	}
	for _, m := range ms {
		if len(m.tests) == 0 {
			t.Errorf("%s: no package to test", m.name)
		}
		patch, err := os.ReadFile(m.patch)
		if err != nil {
			t.Fatal(err)
		}
		_, diff, _ := strings.Cut(string(patch), "\n")
		check := exec.Command("git", "apply", "--check", "-")
		check.Dir, check.Stdin = "..", strings.NewReader(diff)
		if out, err := check.CombinedOutput(); err != nil {
			t.Errorf("%s no longer applies (make it again from the code, as README says): %v\n%s", m.name, err, out)
		}
	}
}

func TestSelectMutants(t *testing.T) {
	all := []mutant{{name: "a"}, {name: "b"}, {name: "c"}}
	sel, err := selectMutants(all, []string{"c", "a.patch"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sel) != 2 || sel[0].name != "a" || sel[1].name != "c" {
		t.Errorf("selected %v", sel)
	}
	if _, err := selectMutants(all, []string{"d"}); err == nil || !strings.Contains(err.Error(), "a, b, c") {
		t.Errorf("unknown name: err = %v", err)
	}
}

func TestTestFailures(t *testing.T) {
	out := strings.Join([]string{
		`{"Action":"fail","Package":"github.com/rivus/collab/lease","Test":"TestA/sub"}`,
		`{"Action":"fail","Package":"github.com/rivus/collab/lease","Test":"TestA"}`,
		`{"Action":"fail","Package":"github.com/rivus/collab/lease","Test":"TestB"}`,
		`{"Action":"fail","Package":"github.com/rivus/collab/lease"}`,
		`{"Action":"pass","Package":"github.com/rivus/collab/plock"}`,
		`{"Action":"output","Package":"github.com/rivus/collab/lanes","Test":"TestHang","Output":"panic: test timed out after 2s\n"}`,
		`{"Action":"output","Package":"github.com/rivus/collab/lanes","Test":"TestHang","Output":"\trunning tests:\n"}`,
		`{"Action":"output","Package":"github.com/rivus/collab/lanes","Test":"TestHang","Output":"\t\tTestHang (2s)\n"}`,
		`{"Action":"output","Package":"github.com/rivus/collab/lanes","Test":"TestHang","Output":"\n"}`,
		`{"Action":"fail","Package":"github.com/rivus/collab/lanes"}`,
		`{"Action":"fail","Package":"github.com/rivus/collab/plock","Test":"TestC"}`,
		`{"Action":"output","Package":"github.com/rivus/collab/plock","Test":"TestD","Output":"panic: test timed out after 2s\n"}`,
		`{"Action":"output","Package":"github.com/rivus/collab/plock","Test":"TestD","Output":"\trunning tests:\n"}`,
		`{"Action":"output","Package":"github.com/rivus/collab/plock","Test":"TestD","Output":"\t\tTestD (2s)\n"}`,
		`{"Action":"fail","Package":"github.com/rivus/collab/plock"}`,
		`{"ImportPath":"github.com/rivus/collab/fsm [x.test]","Action":"build-fail"}`,
		`{"Action":"fail","Package":"github.com/rivus/collab/fsm","FailedBuild":"github.com/rivus/collab/fsm [x.test]"}`,
		`{"Action":"fail","Package":"github.com/rivus/collab/plat"}`,
	}, "\n")
	want := "lease: TestA, TestB; plock: TestC, then hung: timed out in TestD; lanes: hung: timed out in TestHang; fsm: build failed; plat: failed outside any test"
	if got := testFailures(out); got != want {
		t.Errorf("testFailures:\n got %s\nwant %s", got, want)
	}
}

func TestClassifyDemo(t *testing.T) {
	log := filepath.Join(t.TempDir(), "p7.log")
	if err := os.WriteFile(log, []byte("goroutine 1\npanic: lanes: boom\n\nmore\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		res  ran
		kind string
		want string // in the detail
	}{
		{ran{code: 0, stdout: "x\nporcupine: linearizable (3 operations)\n"}, "linearizable", ""},
		{ran{code: 1, stdout: "porcupine: violation (3 operations)\n"}, "violation", ""},
		{ran{code: 1, stderr: "collab demo: torture: worker p7 ended on its own: exit status 2 (its stderr: " + log + ") (seed 1, run directory d)\n"},
			"worker crash", "p7: exit status 2: panic: lanes: boom"},
		{ran{code: 1, stdout: "holders ended on a judgement (a break, a takeover on proof of death): 3, of which not dead: 1\n  ENDED ALIVE: p2's break of \"k0\"\ncommands under collab lock: 3 run\nporcupine: linearizable (3 operations)\n"}, "violation", "p2's break"},
		{ran{code: 1, stdout: "porcupine: linearizable (3 operations)\nlanes: 2 VIOLATIONS of the promises of package lanes\n  lanes 0: 2 activations of key 1 at once\n"},
			"violation", "lanes: lanes 0: 2 activations of key 1 at once"},
		{ran{code: 2, stderr: "panic: lanes: lane policy Lane asked to start a second activation\n\ngoroutine 7\n"}, "campaign crash", "second activation"},
		{ran{code: 2, stderr: "recent steps:\nlanes: contract monitor: key 12: an interrupt leaves the context live\n"}, "campaign crash", "key 12: an interrupt"},
		{ran{code: 1, stdout: "porcupine: inconclusive (3 operations)\n"}, "inconclusive", ""},
		{ran{code: 1, stderr: "collab demo: torture: deadline 1m0s passed with 3/10 operations\n"}, "targets missed", "deadline"},
		{ran{code: 2, stderr: "collab demo: bad flag\n"}, "error", "bad flag"},
		{ran{timedOut: true, took: time.Minute}, "timed out", "1m0s"},
	} {
		d := classifyDemo(c.res)
		if d.kind != c.kind || !strings.Contains(d.detail, c.want) {
			t.Errorf("classifyDemo(%+v) = %q (%q), want %q (containing %q)", c.res, d.kind, d.detail, c.kind, c.want)
		}
	}
}

func TestCampaignResult(t *testing.T) {
	lin := demoRun{store: "sqlite", seed: 1, kind: "linearizable"}
	bad := demoRun{store: "file", seed: 2, kind: "violation"}
	errd := demoRun{store: "file", seed: 1, kind: "error", detail: "x"}
	for _, c := range []struct {
		runs   []demoRun
		status status
		detail string
	}{
		{[]demoRun{lin, lin}, missed, "0/2 runs caught it"},
		{[]demoRun{lin, bad}, caught, "1/2 runs caught it: file/2 violation"},
		{[]demoRun{errd, lin}, missed, "0/2 runs caught it: file/1 error (x)"},
		{[]demoRun{errd}, broken, "0/1 runs caught it: file/1 error (x)"},
	} {
		lr := campaignResult(c.runs, time.Second)
		if lr.status != c.status || lr.detail != c.detail {
			t.Errorf("campaignResult(%v) = %v %q, want %v %q", c.runs, lr.status, lr.detail, c.status, c.detail)
		}
	}
}

func TestVerdict(t *testing.T) {
	res := func(s map[layer]status) result {
		r := result{m: mutant{name: "m", patch: "m.patch"}, layers: map[layer]layerResult{}}
		for l, st := range s {
			r.layers[l] = layerResult{status: st}
		}
		return r
	}
	for _, c := range []struct {
		r       result
		verdict string
		ok      bool
	}{
		{res(map[layer]status{check: missed, monitor: notApplicable, campaign: caught, unit: caught}), "campaign", true},
		{res(map[layer]status{check: caught, campaign: caught}), "model checker, campaign", true},
		{res(map[layer]status{check: missed, campaign: missed, unit: caught}), "unit tests only", false},
		{res(map[layer]status{check: missed, campaign: broken, unit: missed}), "NOTHING", false},
		{res(map[layer]status{check: missed, campaign: needsPG, unit: needsPG}), "not run: needs PostgreSQL", true},
		{result{stale: "does not apply"}, "STALE: the patch no longer applies", false},
		{result{setup: "go build: x"}, "ERROR: go build: x", false},
	} {
		if v := c.r.verdict(); v != c.verdict || c.r.ok() != c.ok {
			t.Errorf("verdict %q ok %v, want %q ok %v", v, c.r.ok(), c.verdict, c.ok)
		}
	}
	rep := &report{results: []result{res(map[layer]status{campaign: caught})}}
	if !rep.ok() {
		t.Error("a run whose every mutant is caught by a campaign is not ok")
	}
	rep.baseline = &result{m: mutant{name: "(baseline)"}, layers: map[layer]layerResult{unit: {status: caught}}}
	if rep.ok() || !strings.Contains(rep.table(), "BASELINE FAILED") {
		t.Error("a failed baseline does not fail the run")
	}
}

func TestDropKeptSchema(t *testing.T) {
	if err := dropKeptSchema(t.Context(), "postgres://nowhere.invalid/x", "PostgreSQL schema: x (dropped)\n"); err != nil {
		t.Errorf("no schema kept: %v", err)
	}
	url := os.Getenv("COLLAB_TEST_POSTGRES_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("COLLAB_TEST_POSTGRES_URL is not set")
		}
		t.Skip("COLLAB_TEST_POSTGRES_URL is not set; make test sets it as root, or see scripts/pg-test-server.sh")
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	const schema = "collab_torture_0_1"
	if _, err := conn.Exec(t.Context(), "CREATE SCHEMA IF NOT EXISTS "+schema+"; CREATE TABLE "+schema+".t (x int)"); err != nil {
		t.Fatal(err)
	}
	if err := dropKeptSchema(t.Context(), url, "run directory: d\nPostgreSQL schema: "+schema+" (kept)\n"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema).Scan(&n); err != nil || n != 0 {
		t.Errorf("the schema is still there (%d, %v)", n, err)
	}
}

// TestCampaignStores: a mutant of one store's code runs the campaign on
// that store alone, so that its catches are counted where it can have
// any; a mutant of shared code runs on every store.
func TestCampaignStores(t *testing.T) {
	all := []string{"sqlite", "file"}
	for _, tc := range []struct {
		files []string
		want  []string
	}{
		{[]string{"lease/file/file.go"}, []string{"file"}},
		{[]string{"lease/sqlite/sqlite.go", "lease/file/file.go"}, []string{"sqlite", "file"}},
		{[]string{"lease/postgres/postgres.go"}, []string{"postgres"}},
		{[]string{"lease/file/file.go", "lease/internal/keyfile/keyfile.go"}, all},
		{[]string{"spec/lease.fsm"}, all},
		{nil, all}, // the baseline
	} {
		if got := (mutant{files: tc.files}).campaignStores(all); !slices.Equal(got, tc.want) {
			t.Errorf("campaignStores of %v = %v, want %v", tc.files, got, tc.want)
		}
	}
}
