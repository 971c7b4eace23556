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
	"github.com/rivus/collab/platform"
)

// TestWrongJudgements: a break or a takeover on proof of death may end
// a holder of the judge's process table only once its kill was sent (or
// the workers were being stopped); a takeover may never prove dead a
// holder of another process table, which a break may end.
func TestWrongJudgements(t *testing.T) {
	p2, p3 := workerID{4001, 7, 50}, workerID{4002, 7, 60}
	workers := map[workerID]int{p2: 2, p3: 3}
	killed := map[int]time.Duration{2: 100}
	j := func(what string, at time.Duration, holder workerID, ownNS uint64) judgement {
		return judgement{process: 1, what: what, key: "k0", gen: 3, at: at, holder: holder, ownNS: ownNS, dead: what == "takeover"}
	}
	tests := []struct {
		name string
		j    judgement
		want string // a part of the one report; "" for none
	}{
		{"a break of a killed holder", j("break", 110, p2, 7), ""},
		{"a takeover of a killed holder", j("takeover", 110, p2, 7), ""},
		{"a break before the kill", j("break", 90, p2, 7), "ended p2 (pid 4001), which was alive"},
		{"a takeover of a holder never killed", j("takeover", 110, p3, 7), "ended p3 (pid 4002), which was alive"},
		{"a pid of no worker", j("break", 110, workerID{9, 7, 1}, 7), "no worker of this campaign"},
		{"a worker's pid, another start", j("break", 110, workerID{4001, 7, 51}, 7), "no worker of this campaign"},
		{"a holder never killed, as the workers stop", j("takeover", 500, p3, 7), ""},
		{"a break of another process table", j("break", 110, workerID{1, 8, 5}, 7), ""},
		{"a takeover proving dead a holder of another process table", j("takeover", 110, workerID{1, 8, 5}, 7), "another process table (pid namespace 8"},
		{"a takeover of a silent holder", judgement{process: 1, what: "takeover", at: 110, holder: p3, ownNS: 7}, ""},
		{"a takeover of a collab process a worker started", j("takeover", 110, workerID{4100, 7, 99}, 7), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wrongJudgements([]judgement{tt.j}, workers, map[workerID]bool{{pid: 4100, ns: 7}: true}, killed, 400)
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
// from the crashes, the workers from their identity files.
func TestJudgementsFromTheRun(t *testing.T) {
	dir := runDirForTest(t)
	for p, id := range map[int]platform.Identity{2: {PID: 4001, PIDNamespace: 7, StartTime: 50}, 4: {PID: 4002, PIDNamespace: 7, StartTime: 60}} {
		if err := writeSelf(dir, p, id); err != nil {
			t.Fatal(err)
		}
	}
	lines := fmt.Sprintf(takeoverLine, 110, "k2", 6, 1, 8, 9, 7, false) + fmt.Sprintf(takeoverLine, 120, "k1", 4, 4001, 7, 50, 7, true)
	if err := os.WriteFile(procFile(dir, eventsDir, 3, takeoverExt), []byte(lines+"130 k1"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := lz.History{Events: []lz.Event{
		{Process: 2, Kind: lz.Crash, Output: lz.Output{Status: lz.OK}, Call: 100, Return: 105},
		{Process: 1, Key: "k0", Kind: lz.Break, Output: lz.Output{Status: lz.OK, Gen: 2, Value: fmt.Sprintf(brokenHolder, 4002, 7, 60, 7)}, Call: 90, Return: 95},
	}}
	s, err := checkJudgements(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	if s.breaks != 1 || s.deadTakeovers != 1 || s.crossTable != 1 || len(s.endedAlive) != 1 || !strings.Contains(s.endedAlive[0], "p1's break of \"k0\" (gen 2) at 95ns ended p4") {
		t.Fatalf("checkJudgements = %+v; want a break, a takeover on proof of death, one across tables, and the break of the live p4 reported", s)
	}
}

// TestJudgementFilesRefuseGarbage: an identity file without an identity,
// a takeover line that is not one, a break that names no holder: each an
// error naming the file (and line) or the operation.
func TestJudgementFilesRefuseGarbage(t *testing.T) {
	dir := runDirForTest(t)
	bad := procFile(dir, eventsDir, 4, selfExt)
	if err := os.WriteFile(bad, []byte("-1 2 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readWorkers(dir); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("readWorkers with %s holding -1 = %v; want an error naming it", bad, err)
	}
	for _, torn := range []string{"", "4003 7"} { // a worker killed as it wrote
		if err := os.WriteFile(bad, []byte(torn), 0o600); err != nil {
			t.Fatal(err)
		}
		if ws, err := readWorkers(dir); err != nil || len(ws) != 0 {
			t.Errorf("readWorkers with %s holding %q = %v, %v; want it skipped", bad, torn, ws, err)
		}
	}
	tk := procFile(dir, eventsDir, 5, takeoverExt)
	if err := os.WriteFile(tk, []byte("1 k0 2 3 4 5 6 true\nnot a takeover\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readTakeovers(tk); err == nil || !strings.Contains(err.Error(), tk+":2") {
		t.Errorf("readTakeovers = %v; want an error naming %s:2", err, tk)
	}
	h := lz.History{Events: []lz.Event{{Process: 1, Key: "k0", Kind: lz.Break, Output: lz.Output{Status: lz.OK, Gen: 2, Value: "garbage"}}}}
	if _, _, err := judgements(t.TempDir(), h); err == nil || !strings.Contains(err.Error(), "p1's break") {
		t.Errorf("judgements of a break without its holder = %v; want an error naming it", err)
	}
	if s, err := readStopping(t.TempDir()); err != nil || s != math.MaxInt64 {
		t.Errorf("readStopping of a run that never stopped = %v, %v; want never", s, err)
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
