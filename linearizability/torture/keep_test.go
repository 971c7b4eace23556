package torture

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	lz "github.com/rivus/collab/linearizability"
)

// writeFiles writes files (path relative to dir → content) under dir,
// making their directories.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKeepCopiesRunDirectory: keep copies the run directory's files into
// a new private directory under the keep directory, which outlives the
// run directory; links are left out.
func TestKeepCopiesRunDirectory(t *testing.T) {
	dir, base := t.TempDir(), t.TempDir()
	files := map[string]string{
		"history.html":                        "<html>",
		filepath.Join(historyDir, "p1.jsonl"): `{"ev":"call"}` + "\n",
		filepath.Join(eventsDir, "p1.log"):    "takeover\n",
		filepath.Join(logsDir, "p1.log"):      "a worker's stderr\n",
	}
	writeFiles(t, dir, files)
	if err := os.Symlink(base, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	kept, err := keep(Config{Dir: dir, KeepDir: base, Seed: 7}, filepath.Join(dir, "history.html"))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(kept) != base || !strings.HasPrefix(filepath.Base(kept), "collab-campaign-seed7-") {
		t.Errorf("kept in %s; want a collab-campaign-seed7-* directory of %s", kept, base)
	}
	if st, err := os.Stat(kept); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the kept directory: %v, %v; want mode 0700", st.Mode(), err)
	}
	if err := os.RemoveAll(dir); err != nil { // as the test's cleanup does
		t.Fatal(err)
	}
	got := tree(t, kept)
	for name, content := range files {
		if got[name] != content {
			t.Errorf("kept %s = %q; want %q", name, got[name], content)
		}
	}
	if _, ok := got["link"]; ok {
		t.Error("the link was kept")
	}
}

// TestKeepWhere: KeepDir comes first, then $COLLAB_KEEP_DIR (made if
// missing), then os.TempDir(); a visualisation outside the run directory
// is copied beside it; DirKept copies nothing; a keep directory inside
// the run directory is refused.
func TestKeepWhere(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{filepath.Join(historyDir, "p1.jsonl"): "\n"})
	html := filepath.Join(t.TempDir(), "page.html")
	writeFiles(t, filepath.Dir(html), map[string]string{"page.html": "<html>"})

	env := filepath.Join(t.TempDir(), "made", "by", "keep")
	t.Setenv(EnvKeepDir, env)
	cfg := Config{Dir: dir, Seed: 3}
	kept, err := keep(cfg, html)
	if err != nil || filepath.Dir(kept) != env {
		t.Fatalf("keep = %s, %v; want a directory of %s", kept, err, env)
	}
	if b, err := os.ReadFile(keptPath(dir, kept, html)); err != nil || string(b) != "<html>" {
		t.Errorf("the visualisation's copy: %q, %v", b, err)
	}
	if keptPath(dir, kept, filepath.Join(dir, "history.html")) != filepath.Join(kept, "history.html") {
		t.Errorf("keptPath of a file of the run directory = %s", keptPath(dir, kept, filepath.Join(dir, "history.html")))
	}

	cfg.KeepDir = t.TempDir()
	if kept, err := keep(cfg, ""); err != nil || filepath.Dir(kept) != cfg.KeepDir {
		t.Errorf("keep with KeepDir = %s, %v; want a directory of %s", kept, err, cfg.KeepDir)
	}
	t.Setenv(EnvKeepDir, "")
	if got := keepBase(Config{Dir: dir}); got != os.TempDir() {
		t.Errorf("keepBase without KeepDir or %s = %s; want %s", EnvKeepDir, got, os.TempDir())
	}

	if kept, err := keep(Config{Dir: dir, DirKept: true, KeepDir: cfg.KeepDir}, ""); kept != dir || err != nil {
		t.Errorf("keep with DirKept = %s, %v; want %s", kept, err, dir)
	}
	inside := filepath.Join(dir, "evidence")
	if kept, err := keep(Config{Dir: dir, KeepDir: inside}, ""); kept != "" || err == nil || !strings.Contains(err.Error(), "inside the run directory") {
		t.Errorf("keep inside the run directory = %q, %v; want a refusal", kept, err)
	}
	if _, err := os.Stat(inside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused keep directory was made: %v", err)
	}
}

// TestKeepFailedError: a campaign that ended in an error keeps its
// evidence and says where, its error still matched by errors.As; a caller
// that keeps Dir gets its error as it was.
func TestKeepFailedError(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{filepath.Join(logsDir, "p1.log"): failMessage})
	we := &WorkerError{Process: 1, Err: errors.New("exit status 3"), Log: filepath.Join(dir, logsDir, "p1.log")}
	cfg := Config{Dir: dir, KeepDir: t.TempDir()}
	res, err := keepFailed(cfg, nil, errors.Join(we))
	var ke *KeptError
	var got *WorkerError
	if res != nil || !errors.As(err, &ke) || !errors.As(err, &got) || got != we {
		t.Fatalf("keepFailed = %v, %v; want a *KeptError of the *WorkerError", res, err)
	}
	if !strings.HasSuffix(err.Error(), "(evidence kept in "+ke.Dir+")") {
		t.Errorf("error %q does not name %s", err, ke.Dir)
	}
	if b, rerr := os.ReadFile(filepath.Join(ke.Dir, logsDir, "p1.log")); rerr != nil || string(b) != failMessage {
		t.Errorf("the kept log: %q, %v", b, rerr)
	}
	cfg.DirKept = true
	if _, err := keepFailed(cfg, nil, we); err != we {
		t.Errorf("keepFailed with DirKept = %v; want the error as it was", err)
	}
}

// violatingHistory is the run directory of a finished campaign whose
// lease "k0" is not linearizable (p1 writes with generation 1 after p2's
// acquisition of generation 2 returned), with three operations of
// unknown outcome on "k1": one timed out, one of a worker paused while
// it was under way, one killed.
var violatingHistory = map[string]string{
	filepath.Join(historyDir, "p1.jsonl"): `{"ev":"call","p":1,"id":1,"at":100,"key":"k0","kind":"acquire","in":{}}
{"ev":"ret","p":1,"id":1,"at":110,"out":{"status":"ok","gen":1}}
{"ev":"call","p":1,"id":2,"at":140,"key":"k0","kind":"write","in":{"token":1,"value":"p1.1"}}
{"ev":"ret","p":1,"id":2,"at":150,"out":{"status":"ok"}}
`,
	filepath.Join(historyDir, "p2.jsonl"): `{"ev":"call","p":2,"id":1,"at":120,"key":"k0","kind":"acquire","in":{}}
{"ev":"ret","p":2,"id":1,"at":130,"out":{"status":"ok","gen":2}}
`,
	filepath.Join(historyDir, "p3.jsonl"): `{"ev":"call","p":3,"id":1,"at":200,"key":"k1","kind":"acquire","in":{}}
{"ev":"ret","p":3,"id":1,"at":210,"out":{"status":"unknown","reason":"timeout"}}
`,
	filepath.Join(historyDir, "p4.jsonl"): `{"ev":"call","p":4,"id":1,"at":220,"key":"k1","kind":"acquire","in":{}}
{"ev":"ret","p":4,"id":1,"at":230,"out":{"status":"unknown","reason":"lease lost"}}
{"ev":"call","p":4,"id":2,"at":240,"key":"k1","kind":"acquire","in":{}}
`,
	filepath.Join(eventsDir, pausesFile): "p4 215 225\np3 300 400\n",
}

// TestFailedCheckKeepsEvidence: the check of a finished run that fails
// keeps its evidence where it outlives the run directory, the
// visualisation included, and the summary says where, names the
// violating object and the operations porcupine could not place (with
// process, input, output and times), and counts the unknown outcomes by
// reason.
func TestFailedCheckKeepsEvidence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	writeFiles(t, dir, violatingHistory)
	cfg := Config{Dir: dir, KeepDir: t.TempDir(), Seed: 9}.WithDefaults()
	res, err := checkRun(cfg, Stats{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Failed() || res.Report.Verdict != lz.Violation || res.Kept == "" || res.KeepErr != nil {
		t.Fatalf("verdict %v, kept in %q (%v); want a violation kept", res.Report.Verdict, res.Kept, res.KeepErr)
	}
	if err := os.RemoveAll(dir); err != nil { // as the test's cleanup does
		t.Fatal(err)
	}
	if want := filepath.Join(res.Kept, "history.html"); res.HTML != want {
		t.Errorf("HTML = %s; want its copy %s", res.HTML, want)
	}
	if st, err := os.Stat(res.HTML); err != nil || st.Size() == 0 {
		t.Errorf("the kept visualisation: %v", err)
	}
	if _, err := os.Stat(filepath.Join(res.Kept, historyDir, "p1.jsonl")); err != nil {
		t.Errorf("the kept history: %v", err)
	}
	var out strings.Builder
	res.Print(&out)
	text := out.String()
	t.Log("\n" + text)
	for _, want := range []string{
		"unknown outcomes: 3 (killed 1, paused 1, timeout 1)\n",
		"porcupine: violation",
		`violating objects, the shortest failing history first: lease "k0"` + "\n",
		`lease "k0": porcupine placed 2 of the 3 operations it checked, the last p2 acquire -> gen 2, leaving gen 2 held, value ""; it could place none of these next:` + "\n" +
			`  p1 write(token 1, "p1.1") -> ok; called +40ns, returned +50ns (monotonic ns 140 .. 150)` + "\n",
		"replay with seed 9\n",
		"history: " + res.HTML + "\n",
		"evidence kept in " + res.Kept + " ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
}

// TestPassingCheckKeepsNothing: a run that passes copies nothing.
func TestPassingCheckKeepsNothing(t *testing.T) {
	dir := t.TempDir()
	p1 := filepath.Join(historyDir, "p1.jsonl") // an acquisition and a write with its token
	writeFiles(t, dir, map[string]string{p1: violatingHistory[p1]})
	cfg := Config{Dir: dir, KeepDir: t.TempDir()}.WithDefaults()
	res, err := checkRun(cfg, Stats{})
	if err != nil || res.Failed() || res.Kept != "" {
		t.Fatalf("checkRun = %+v, %v; want a pass, nothing kept", res.Report, err)
	}
	if entries, err := os.ReadDir(cfg.KeepDir); err != nil || len(entries) != 0 {
		t.Errorf("the keep directory holds %d entries (%v)", len(entries), err)
	}
	var out strings.Builder
	res.Print(&out)
	if strings.Contains(out.String(), "evidence kept") || !strings.Contains(out.String(), "unknown outcomes: 0\n") {
		t.Errorf("summary:\n%s", out.String())
	}
}
