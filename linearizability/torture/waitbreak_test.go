package torture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	lz "github.com/rivus/collab/linearizability"
)

// TestLiveBreaks: a break without force may end only a holder whose kill
// was sent before the break returned; any other is reported, and so is
// one that names no worker or no pid.
func TestLiveBreaks(t *testing.T) {
	crash := lz.Event{Process: 2, Kind: lz.Crash, Output: lz.Output{Status: lz.OK}, Call: 100, Return: 120}
	brk := func(value string, call, ret int64) lz.Event {
		return lz.Event{Process: 1, Key: "k0", Kind: lz.Break, Output: lz.Output{Status: lz.OK, Gen: 3, Value: value}, Call: call, Return: ret}
	}
	pids := map[int]int{4001: 2, 4002: 3}
	tests := []struct {
		name string
		evs  []lz.Event
		want string // a part of the one report; "" for none
	}{
		{"a killed holder", []lz.Event{crash, brk("pid 4001", 110, 130)}, ""},
		{"the kill sent while the break ran", []lz.Event{crash, brk("pid 4001", 90, 105)}, ""},
		{"a holder killed after the break returned", []lz.Event{crash, brk("pid 4001", 80, 95)}, "which was alive"},
		{"a holder never killed", []lz.Event{crash, brk("pid 4002", 110, 130)}, "of p3 (pid 4002), which was alive"},
		{"a pid of no worker", []lz.Event{brk("pid 9", 110, 130)}, "no worker of this campaign"},
		{"no pid", []lz.Event{brk("", 110, 130)}, "names no holder pid"},
		{"a refused break", []lz.Event{{Process: 1, Key: "k0", Kind: lz.Break, Output: lz.Output{Status: lz.Refused}, Call: 1, Return: 2}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := liveBreaks(lz.History{Events: tt.evs}, pids)
			switch {
			case tt.want == "" && len(got) > 0:
				t.Fatalf("reported %q", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Fatalf("reported %q; want one report with %q", got, tt.want)
			}
		})
	}
}

// TestReadPIDsRefusesGarbage: a pid file that holds no pid is an error
// naming the file.
func TestReadPIDsRefusesGarbage(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, eventsDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(procFile(dir, eventsDir, 3, pidExt), []byte("4003\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pids, err := readPIDs(dir)
	if err != nil || pids[4003] != 3 {
		t.Fatalf("readPIDs = %v, %v; want pid 4003 of p3", pids, err)
	}
	bad := procFile(dir, eventsDir, 4, pidExt)
	if err := os.WriteFile(bad, []byte("-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readPIDs(dir); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("readPIDs with %s holding -1 = %v; want an error naming it", bad, err)
	}
}
