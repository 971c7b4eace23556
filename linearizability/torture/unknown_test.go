package torture

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	lz "github.com/rivus/collab/linearizability"
)

// TestReasonOf: a failed operation's error and context name why its
// outcome is unknown; a lost lease comes first, as RunFenced wraps the
// work's error in it.
func TestReasonOf(t *testing.T) {
	live := context.Background()
	ended, cancel := context.WithCancel(live)
	cancel()
	storeErr := errors.New("disk I/O error")
	for _, tc := range []struct {
		ctx  context.Context
		err  error
		want string
	}{
		{live, storeErr, reasonStore},
		{live, context.DeadlineExceeded, reasonTimeout},
		{live, fmt.Errorf("opening: %w", context.DeadlineExceeded), reasonTimeout},
		{ended, errors.New("interrupted (9)"), reasonTimeout},
		{ended, fmt.Errorf("%w: %w", lease.ErrLost, context.Canceled), reasonLeaseLost},
		{live, lease.ErrFenceLost, reasonLeaseLost},
		{live, lease.ErrReleased, reasonLeaseLost},
	} {
		out := unknown(tc.ctx, tc.err)
		if out.Status != lz.Unknown || out.Reason != tc.want {
			t.Errorf("unknown(ctx ended %v, %v) = %+v; want Unknown, %q", tc.ctx.Err() != nil, tc.err, out, tc.want)
		}
	}
	ran := writeOutput(live, storeErr, true)
	if ran.Status != lz.Unknown || ran.Reason != reasonStore {
		t.Errorf("writeOutput of a write that ran and failed = %+v", ran)
	}
	if out := writeOutput(live, lease.ErrLost, false); out != outRefused {
		t.Errorf("writeOutput of a write RunFenced refused = %+v", out)
	}
}

// TestUnknownReasons: the operations of unknown outcome are counted by
// reason: killed when open (paused or not), paused when a pause of their
// process overlaps them, else as recorded; known outcomes, and pauses of
// other processes or other times, do not count.
func TestUnknownReasons(t *testing.T) {
	ev := func(p int, call, ret int64, out lz.Output) lz.Event {
		return lz.Event{Process: p, Key: "k", Kind: lz.Acquire, Output: out, Call: call, Return: ret}
	}
	h := lz.History{Events: []lz.Event{
		ev(1, 0, 10, lz.Output{Status: lz.OK, Gen: 1}),
		ev(1, 20, 30, unknownFor(reasonTimeout)),       // the pause ends at 20: before
		ev(1, 40, 50, unknownFor(reasonTimeout)),       // the pause begins at 50: after
		ev(1, 60, 70, unknownFor(reasonStore)),         // overlapped
		ev(2, 60, 70, unknownFor(reasonStore)),         // another process
		ev(2, 80, 90, lz.Output{Status: lz.Unknown}),   // no reason
		ev(3, 65, 0, lz.Output{}),                      // open, below
		ev(3, 100, 110, unknownFor(reasonUnreported)),  // another kind of reason
		ev(3, 120, 130, lz.Output{Status: lz.Refused}), // known
	}}
	h.Events[6].Open = true
	pauses := []pause{{1, 10, 20}, {1, 50, 65}, {3, 60, 70}}
	got := unknownReasons(h, pauses)
	want := map[string]int{reasonTimeout: 2, reasonPaused: 1, reasonStore: 1, reasonNone: 1, reasonKilled: 1, reasonUnreported: 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("unknownReasons = %v; want %v", got, want)
	}
	if s := unknownSummary(got); s != "7 (timeout 2, killed 1, no reason recorded 1, paused 1, store error 1, unreported 1)" {
		t.Errorf("unknownSummary = %q", s)
	}
	if s := unknownSummary(map[string]int{reasonKilled: 60, reasonTimeout: 10, reasonStore: 5}); s != "75 (killed 60, timeout 10, store error 5)" {
		t.Errorf("unknownSummary = %q", s)
	}
	if s := unknownSummary(nil); s != "0" {
		t.Errorf("unknownSummary(nil) = %q", s)
	}
}

// TestReadPauses reads the controller's pauses file: none when the run
// made none; a last line cut short is skipped; a bad line names the file
// and line.
func TestReadPauses(t *testing.T) {
	dir := t.TempDir()
	if ps, err := readPauses(dir); ps != nil || err != nil {
		t.Fatalf("readPauses without a file = %v, %v", ps, err)
	}
	path := filepath.Join(eventsDir, pausesFile)
	writeFiles(t, dir, map[string]string{path: "p4 215 225\np12 1000 2000\np5 3"})
	ps, err := readPauses(dir)
	if want := []pause{{4, 215, 225}, {12, 1000, 2000}}; err != nil || fmt.Sprint(ps) != fmt.Sprint(want) {
		t.Errorf("readPauses = %v, %v; want %v", ps, err, want)
	}
	writeFiles(t, dir, map[string]string{path: "p4 215 225\nsomething else\n"})
	if _, err := readPauses(dir); err == nil || !strings.Contains(err.Error(), pausesFile+":2:") {
		t.Errorf("readPauses of a bad line = %v; want an error naming line 2", err)
	}
}

// TestPauseLine: the controller's line reads back as the pause it
// wrote, on the clock's nanoseconds.
func TestPauseLine(t *testing.T) {
	dir := t.TempDir()
	from, to := 81234567*time.Nanosecond, 81834567*time.Nanosecond
	writeFiles(t, dir, map[string]string{filepath.Join(eventsDir, pausesFile): fmt.Sprintf(pauseLine, 7, from, to)})
	ps, err := readPauses(dir)
	if err != nil || len(ps) != 1 || ps[0] != (pause{7, from, to}) {
		t.Errorf("readPauses = %v, %v", ps, err)
	}
}
