package torture

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Stats are a campaign's counts so far.
type Stats struct {
	Ops       int           // operations returned (the workers' return lines)
	Kills     int           // workers SIGKILLed and reaped
	Pauses    int           // SIGSTOP/SIGCONT pauses of at least Config.Pause, ended
	Takeovers int           // leases taken over from a dead or silent holder
	Refused   int           // fenced writes refused: a stale holder stopped
	Started   int           // worker processes started, restarts included
	Elapsed   time.Duration // since the campaign started
	Lost      int           // leases their holders declared lost
	Waits     int           // AcquireWait calls begun
	Handovers int           // AcquireWait calls that acquired
	Breaks    int           // lease.Break calls that ended a holder
	Terms     int           // leaders' terms begun (lease/leader's OnStarted)
	TermsLost int           // terms that ended with the lease lost
	// CommandLocks counts the commands run under `collab lock`, of which
	// CommandOrphans ran on after it was killed, holding the guard, and
	// CommandKernel under the small collab, its lock taken through the
	// kernel (Config.CollabLock); CommandRefused the `collab lock` runs
	// that found the lock held.
	CommandLocks, CommandOrphans, CommandKernel, CommandRefused int
	// LeaseRuns counts the commands run under `collab lease run --wait`,
	// LeaseRunsTimedOut the runs that gave up waiting.
	LeaseRuns, LeaseRunsTimedOut int
	// DeadTakeovers counts the takeovers on proof of death, CrossTable
	// the breaks and takeovers of a holder in another process table, both
	// counted as the run is checked; InPIDNamespaces the workers started
	// each in a pid namespace of its own.
	DeadTakeovers, CrossTable, InPIDNamespaces int
	// StaleWrites are fenced writes accepted from a stale holder: they
	// returned OK with a token below the generation of an acquisition of
	// their key that had returned before they were called. Each is a
	// violation the check must report; a safe campaign has none.
	StaleWrites int
	// ServerStops and ServerPauses count the server faults ended, and
	// Outages lists them.
	ServerStops, ServerPauses int
	Outages                   []Outage
	// CutOff counts the leases that their holders had acquired before a
	// server stop began and declared lost during it, or within 3 TTLs of
	// its end: holders cut off by the outage.
	CutOff int
}

// tally counts the new bytes of the run directory's history and events
// files since its last look, for the progress line.
type tally struct {
	dir     string
	offsets map[string]int64
	ops     int
	notes   map[string]int
	stale   *staleTally
	cut     *cutTally
}

func newTally(dir string) *tally {
	return &tally{dir: dir, offsets: map[string]int64{}, notes: map[string]int{}, stale: newStaleTally(), cut: newCutTally()}
}

// update reads what was appended since the last update. Files that
// cannot be read now are read on a later update.
func (t *tally) update() {
	retLine := []byte(`{"ev":"ret"`)
	hist, _ := filepath.Glob(filepath.Join(t.dir, historyDir, "p*.jsonl"))
	for _, f := range hist {
		lines := t.tail(f)
		t.ops += bytes.Count(lines, retLine)
		t.stale.add(lines)
		t.cut.addHistory(lines)
	}
	evs, _ := filepath.Glob(filepath.Join(t.dir, eventsDir, "p*.log"))
	for _, f := range evs {
		for _, w := range bytes.Split(t.tail(f), []byte("\n")) {
			if len(w) > 0 {
				t.notes[string(w)]++
			}
		}
	}
	lost, _ := filepath.Glob(filepath.Join(t.dir, eventsDir, "p*"+lossExt))
	for _, f := range lost {
		if p, err := lossProcess(f); err == nil {
			t.cut.addLosses(p, t.tail(f))
		}
	}
}

// tail returns the whole lines appended to path since the last call.
func (t *tally) tail(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(t.offsets[path], io.SeekStart); err != nil {
		return nil
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	b = b[:bytes.LastIndexByte(b, '\n')+1] // a line being written is read next time
	t.offsets[path] += int64(len(b))
	return b
}
