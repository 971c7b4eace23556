package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivus/collab/linearizability/torture"
	"go.uber.org/goleak"
)

// TestMain makes this test binary a campaign worker when the demo's
// controller starts it as one, as main does for collab, and collab itself
// with $COLLAB_TEST_AS_COLLAB set; the tests must leave no goroutine
// behind.
func TestMain(m *testing.M) {
	torture.WorkerMain()
	if os.Getenv(asCollabEnv) == "1" { // a real collab process, for tests that kill one
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	workerCommand = []string{os.Args[0], "-test.run=^$"}
	collabCommand = os.Args[0] // run as collab: TestDemoRuns sets asCollabEnv
	goleak.VerifyTestMain(m)
}

// asCollabEnv makes the test binary run as collab (see TestMain).
const asCollabEnv = "COLLAB_TEST_AS_COLLAB"

func TestDemoRejectsMisuse(t *testing.T) {
	for _, args := range [][]string{
		{"--store", "postgres"},
		{"--workers", "1"},
		{"--duration", "-1s"},
		{"extra"},
		{"--no-such-flag"},
	} {
		var out, errb bytes.Buffer
		if code := runDemo(args, nil, &out, &errb); code != 2 {
			t.Errorf("demo %q exited %d, want 2 (stderr %q)", args, code, errb.String())
		}
	}
}

// TestDemoRuns runs a two-second demo on each store: it must say what it
// runs, show progress, print the summary and a linearizable verdict,
// and write the visualisation where it says.
func TestDemoRuns(t *testing.T) {
	for _, store := range []string{"sqlite", "file"} {
		t.Run(store, func(t *testing.T) {
			t.Setenv(asCollabEnv, "1") // for the workers' `collab lock`
			dir := t.TempDir()
			var out, errb bytes.Buffer
			code := runDemo([]string{"--duration", "2s", "--store", store, "--seed", "3", "--workers", "3", "--dir", dir, "--lanes", "1s"}, nil, &out, &errb)
			text := out.String()
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, text, errb.String())
			}
			html := filepath.Join(dir, "history.html")
			for _, want := range []string{"seed 3", "\r", " ops ", "kills", "pauses", "takeovers", "stale writes refused",
				"operation", "porcupine: linearizable", "history: " + html,
				"commands under collab lock:", "commands under collab lease run --wait:", "lanes: every promise kept"} {
				if !strings.Contains(text, want) {
					t.Errorf("output lacks %q:\n%s", want, text)
				}
			}
			if fi, err := os.Stat(html); err != nil || fi.Size() < 1000 {
				t.Errorf("visualisation %s: %v", html, err)
			}
		})
	}
}
