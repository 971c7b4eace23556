package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivus/collab/internal/command"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func useFake(t *testing.T) *platformtest.Fake {
	f := platformtest.New(t)
	old := command.Host
	command.Host = func() *platform.Platform { return f.Platform }
	t.Cleanup(func() { command.Host = old })
	return f
}

func TestIdentityPrintsStampAndJudgesItAlive(t *testing.T) {
	f := useFake(t)
	code, out, errOut := runCLI(t, "", "identity")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	self, _ := f.Processes.Self()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != string(self.Marshal()) || !strings.Contains(lines[1], ": alive (") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestIdentityFailsWhenSelfFails(t *testing.T) {
	f := useFake(t)
	f.Processes.FailSelf(errors.New("sandbox"))
	code, _, errOut := runCLI(t, "", "identity")
	if code != 1 || !strings.Contains(errOut, "sandbox") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestJudge(t *testing.T) {
	f := useFake(t)
	dead := f.Processes.Start()
	f.Processes.Kill(dead.PID)
	f.Processes.Reap(dead.PID)
	tests := []struct {
		name, stdin string
		args        []string
		code        int
		want        string
	}{
		{"dead holder", "", []string{"judge", string(dead.Marshal())}, 0, ": dead ("},
		{"from stdin", string(dead.Marshal()), []string{"judge", "-"}, 0, ": dead ("},
		{"garbage stamp", "", []string{"judge", `{"pid":"x"}`}, 1, `field "pid"`},
		{"no argument", "", []string{"judge"}, 2, "usage"},
		{"unknown command", "", []string{"nope"}, 2, `unknown command "nope"`},
		{"no command", "", nil, 2, "usage: collab COMMAND"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.stdin, tc.args...)
			if code != tc.code || !strings.Contains(out+errOut, tc.want) {
				t.Fatalf("exit %d, want %d; output %q, want it to contain %q", code, tc.code, out+errOut, tc.want)
			}
		})
	}
}

func TestHelpListsCommands(t *testing.T) {
	code, out, _ := runCLI(t, "", "help")
	if code != 0 || !strings.Contains(out, "identity") || !strings.Contains(out, "judge") {
		t.Fatalf("exit %d, output %q", code, out)
	}
}

func TestGenWritesPolicyFromSpec(t *testing.T) {
	out := t.TempDir()
	code, _, errOut := runCLI(t, "", "gen", "-pkg", "mypolicy", "-out", out, "../../spec/lane.fsm")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"lane_gen.go", "lane_gen_test.go", "lane.dot", "lane.mmd"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("collab gen did not write %s: %v", name, err)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.fsm")
	if err := os.WriteFile(bad, []byte("machine X\nstate A initial\nA --Nope --> A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, "", "gen", "-pkg", "p", "-out", t.TempDir(), bad)
	if code != 1 || !strings.Contains(errOut, "bad.fsm:3:") {
		t.Fatalf("invalid spec: exit %d, stderr %q; want exit 1 naming bad.fsm:3", code, errOut)
	}
}

// collab gen model-checks a family's policy first: one that collab check
// rejects is not written, with the counterexample, unless -unchecked says
// so; a spec of no family is written with a note that nothing checked it.
func TestGenChecksFirst(t *testing.T) {
	unsafe := "../../worldmodel/testdata/mutations/lease-silent-holder-held.fsm"
	out := t.TempDir()
	code, _, errOut := runCLI(t, "", "gen", "-pkg", "p", "-out", out, unsafe)
	if code != 1 || !strings.Contains(errOut, "violation of") || !strings.Contains(errOut, "nothing written") {
		t.Fatalf("a failing policy: exit %d, stderr %q", code, errOut)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("collab gen wrote %d files of a policy that failed its check", len(entries))
	}
	code, _, errOut = runCLI(t, "", "gen", "-unchecked", "-pkg", "p", "-out", out, unsafe)
	if code != 0 || !strings.Contains(errOut, "not model-checked") {
		t.Fatalf("-unchecked: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(out, "lease_gen.go")); err != nil {
		t.Fatalf("-unchecked wrote no policy: %v", err)
	}
	door := filepath.Join(t.TempDir(), "door.fsm")
	if err := os.WriteFile(door, []byte("machine Door\ntrigger Push\noutput open\nstate Closed initial\nClosed --Push / open\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, "", "gen", "-pkg", "p", "-out", t.TempDir(), door)
	if code != 0 || !strings.Contains(errOut, "no world to check it in") {
		t.Fatalf("a spec of no family: exit %d, stderr %q", code, errOut)
	}
}
