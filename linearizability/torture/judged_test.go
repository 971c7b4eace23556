package torture

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lz "github.com/rivus/collab/linearizability"
)

// TestWrongJudgements: a break or a takeover on proof of death may end
// a holder of the judge's process table only once its kill was sent (or
// the workers were being stopped); a takeover may never prove dead a
// holder of another process table, which a break may end.
func TestWrongJudgements(t *testing.T) {
	pids := map[int]int{4001: 2, 4002: 3}
	killed := map[int]time.Duration{2: 100}
	j := func(what string, at time.Duration, pid int, holderNS, ownNS uint64) judgement {
		return judgement{process: 1, what: what, key: "k0", gen: 3, at: at, pid: pid, holderNS: holderNS, ownNS: ownNS}
	}
	tests := []struct {
		name string
		j    judgement
		want string // a part of the one report; "" for none
	}{
		{"a break of a killed holder", j("break", 110, 4001, 7, 7), ""},
		{"a takeover of a killed holder", j("takeover", 110, 4001, 7, 7), ""},
		{"a break before the kill", j("break", 90, 4001, 7, 7), "ended p2 (pid 4001), which was alive"},
		{"a takeover of a holder never killed", j("takeover", 110, 4002, 7, 7), "ended p3 (pid 4002), which was alive"},
		{"a pid of no worker", j("break", 110, 9, 7, 7), "no worker of this campaign"},
		{"a holder never killed, as the workers stop", j("takeover", 500, 4002, 7, 7), ""},
		{"a break of another process table", j("break", 110, 1, 8, 7), ""},
		{"a takeover proving dead a holder of another process table", j("takeover", 110, 1, 8, 7), "another process table (pid namespace 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wrongJudgements([]judgement{tt.j}, pids, killed, 400)
			switch {
			case tt.want == "" && len(got) > 0:
				t.Fatalf("reported %q", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Fatalf("reported %q; want one report with %q", got, tt.want)
			}
		})
	}
}

// TestJudgementsFromTheRun: the breaks come from the history, the
// takeovers from the files (a last line cut short skipped), the kills
// from the crashes.
func TestJudgementsFromTheRun(t *testing.T) {
	dir := runDirForTest(t)
	line := fmt.Sprintf(takeoverLine, 120, "k1", 4, 4001, 7, 7)
	if err := os.WriteFile(procFile(dir, eventsDir, 3, takeoverExt), []byte(line+"130 k1"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := lz.History{Events: []lz.Event{
		{Process: 2, Kind: lz.Crash, Output: lz.Output{Status: lz.OK}, Call: 100, Return: 105},
		{Process: 1, Key: "k0", Kind: lz.Break, Output: lz.Output{Status: lz.OK, Gen: 2, Value: fmt.Sprintf(brokenHolder, 4002, 7, 7)}, Call: 90, Return: 95},
	}}
	js, killed, err := judgements(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(js) != 2 || killed[2] != 100 || js[0].what != "break" || js[0].pid != 4002 || js[1].what != "takeover" || js[1].at != 120 || js[1].process != 3 {
		t.Fatalf("judgements = %+v, killed %v", js, killed)
	}
	got := wrongJudgements(js, map[int]int{4001: 2, 4002: 4}, killed, math.MaxInt64)
	if len(got) != 1 || !strings.Contains(got[0], "p1's break") {
		t.Fatalf("wrong judgements = %q; want the break of the live p4", got)
	}
}

// TestJudgementFilesRefuseGarbage: a pid file without a pid, a takeover
// line that is not one, a break that names no holder: each an error
// naming the file (and line) or the operation.
func TestJudgementFilesRefuseGarbage(t *testing.T) {
	dir := runDirForTest(t)
	if err := writePID(dir, 3, 4003); err != nil {
		t.Fatal(err)
	}
	if pids, err := readPIDs(dir); err != nil || pids[4003] != 3 {
		t.Fatalf("readPIDs = %v, %v; want pid 4003 of p3", pids, err)
	}
	bad := procFile(dir, eventsDir, 4, pidExt)
	if err := os.WriteFile(bad, []byte("-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readPIDs(dir); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("readPIDs with %s holding -1 = %v; want an error naming it", bad, err)
	}
	tk := procFile(dir, eventsDir, 5, takeoverExt)
	if err := os.WriteFile(tk, []byte("1 k0 2 3 4 5\nnot a takeover\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readTakeovers(tk); err == nil || !strings.Contains(err.Error(), tk+":2") {
		t.Errorf("readTakeovers = %v; want an error naming %s:2", err, tk)
	}
	h := lz.History{Events: []lz.Event{{Process: 1, Key: "k0", Kind: lz.Break, Output: lz.Output{Status: lz.OK, Gen: 2, Value: "garbage"}}}}
	if _, _, err := judgements(t.TempDir(), h); err == nil || !strings.Contains(err.Error(), "p1's break") {
		t.Errorf("judgements of a break without its holder = %v; want an error naming it", err)
	}
}

// runDirForTest makes a run directory's events directory.
func runDirForTest(t *testing.T) string {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, eventsDir), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}
