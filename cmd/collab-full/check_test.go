package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckShippedPoliciesPass(t *testing.T) {
	code, out, errOut := runCLI(t, "", "check")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, family := range []string{"Turn", "Lane", "Lease"} {
		if !lineHas(out, family, "passed") {
			t.Errorf("no passed line for %s:\n%s", family, out)
		}
	}
}

func TestCheckCatchesAMutatedSpecWithItsTrace(t *testing.T) {
	spec := "../../worldmodel/testdata/mutations/lane-follow-up-dropped.fsm"
	code, out, errOut := runCLI(t, "", "check", spec)
	if code != 1 || !strings.Contains(out, "violated") || !strings.Contains(out, "violation of") || !strings.Contains(out, "  1. ") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr: %s", code, out, errOut)
	}
}

func TestCheckReportsSpecErrorsAndLimits(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.fsm")
	if err := os.WriteFile(bad, []byte("machine X family lane\nstate A initial\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "", "check", bad); code != 1 || !strings.Contains(errOut, "bad.fsm:") {
		t.Fatalf("invalid spec: exit %d, stderr %q", code, errOut)
	}
	code, out, _ := runCLI(t, "", "check", "--max-states", "10", "../../spec/lease.fsm")
	if code != 1 || !strings.Contains(out, "incomplete") {
		t.Fatalf("a state limit must give incomplete and exit 1: exit %d, %q", code, out)
	}
}

func TestCheckRejectsNegativeLimits(t *testing.T) {
	code, out, errOut := runCLI(t, "", "check", "--timeout", "-1s", "--max-states", "-3")
	if code != 2 || out != "" ||
		!strings.Contains(errOut, `collab check: invalid value "-1s" for flag --timeout: negative`) ||
		!strings.Contains(errOut, `collab check: invalid value "-3" for flag --max-states: negative`) {
		t.Fatalf("exit %d (want 2), stdout %q, stderr %q", code, out, errOut)
	}
}

// A spec of a family without a world model is named with its line, and
// the other specs are still checked.
func TestCheckNamesASpecWithoutWorldModel(t *testing.T) {
	door := filepath.Join(t.TempDir(), "door.fsm")
	if err := os.WriteFile(door, []byte("# a door\nmachine Door\nstate Closed initial\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "check", door, "../../spec/turn.fsm")
	if code != 1 || !strings.Contains(errOut, "door.fsm:2:") || !strings.Contains(errOut, "no family") || !lineHas(out, "Turn", "passed") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// A policy that waives a guarantee passes, and the check says what it
// keeps and what it waives, with the spec's reason.
func TestCheckPrintsGuaranteesKeptAndWaived(t *testing.T) {
	code, out, errOut := runCLI(t, "", "check", "../../examples/proofofdeath/lease.fsm")
	if code != 0 || !lineHas(out, "keeps", "silentRemoteTakenOver") || !lineHas(out, "waives", "silentLocalTakenOver") ||
		!lineHas(out, "because:", "only on proof of death") || !lineHas(out, "ProofLease", "passed") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr: %s", code, out, errOut)
	}
}

// A spec that waives a safety property is refused, naming it.
func TestCheckRefusesAWaivedSafetyProperty(t *testing.T) {
	src, err := os.ReadFile("../../spec/lease.fsm")
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(t.TempDir(), "unsafe.fsm")
	src = append(src, "## Faster without it.\nwaive fencedApart\n"...)
	if err := os.WriteFile(spec, src, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "", "check", spec)
	if code != 1 || !strings.Contains(errOut, "unsafe.fsm:") || !strings.Contains(errOut, `fencedApart ("fenced sections never overlap") is a safety property of family lease`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
