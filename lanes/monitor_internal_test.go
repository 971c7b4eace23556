package lanes

import (
	"context"
	"github.com/rivus/collab/policy"
	"strings"
	"testing"

	"github.com/rivus/collab/internal/contract"
)

// monitorPanic runs f, with the monitor's failure made a panic, and
// returns the report it failed with, or "".
func monitorPanic(f func()) (msg string) {
	defer contract.SetFail(func(report string) { panic(report) })()
	defer func() {
		if v := recover(); v != nil {
			msg, _ = v.(string)
		}
	}()
	f()
	return ""
}

// TestMonitorNamesEachBrokenDuty plants each broken duty in the
// bookkeeping the monitor reads and checks that it names it.
func TestMonitorNamesEachBrokenDuty(t *testing.T) {
	l := newLanes(t, Config[string]{MaxConcurrent: 1,
		Activate: func(context.Context, string) error { return nil }})
	held := func() *activationContext { return testContext(context.Background()) }
	run, other := held(), held()
	a := &lane[string]{key: "a", run: activation{ctx: run}}
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"no slot", func() { l.enterLocked(&lane[string]{key: "b"}, run) }, "holds no slot of its lane"},
		{"twice at once", func() { l.running = 1; l.enterLocked(a, run); l.enterLocked(a, run) }, "other activation has not returned"},
		{"more than the slots", func() {
			l.mon = laneMonitor{}
			l.running = 1
			l.enterLocked(a, run)
			l.enterLocked(&lane[string]{key: "b", run: activation{ctx: other}}, other)
		}, "2 activations run with 1 slots in use, of 1"},
		{"ended by another", func() { l.endingLocked(a, other) }, "no longer its lane's"},
		{"timed out after it returned", func() {
			l.mon = laneMonitor{}
			l.running = 1
			l.enterLocked(a, run)
			l.leaveLocked(a)
			l.timingOutLocked(a)
		}, "whose Activate has returned"},
		{"interrupt without cancel", func() {
			l.interruptedLocked(a, policy.Result{Verdict: policy.Fired, Outputs: policy.LaneOutputInterrupt})
		}, "context live"},
	} {
		msg := monitorPanic(tt.f)
		if !strings.Contains(msg, "lanes: contract monitor") || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: panic %q, want the monitor naming %q", tt.name, msg, tt.want)
		}
	}
	l.mon, l.running = laneMonitor{}, 0
}

// TestMonitorLetsATimeoutComeBeforeActivate: a turn timeout that fires
// before the activation's goroutine has entered Activate (the CPU was
// busy) is no breach of duty 4; one after Activate returned is.
func TestMonitorLetsATimeoutComeBeforeActivate(t *testing.T) {
	l := newLanes(t, Config[string]{MaxConcurrent: 1, Activate: func(context.Context, string) error { return nil }})
	run := testContext(context.Background())
	a := &lane[string]{key: "a", run: activation{ctx: run}}
	if msg := monitorPanic(func() { l.timingOutLocked(a) }); msg != "" {
		t.Fatalf("a timeout before Activate was entered: %q", msg)
	}
	l.running = 1
	l.enterLocked(a, run)
	if msg := monitorPanic(func() { l.timingOutLocked(a) }); msg != "" {
		t.Fatalf("a timeout while Activate runs: %q", msg)
	}
	l.leaveLocked(a)
	if msg := monitorPanic(func() { l.timingOutLocked(a) }); !strings.Contains(msg, "whose Activate has returned") {
		t.Fatalf("a timeout after Activate returned: %q, want the monitor's report", msg)
	}
	l.mon, l.running = laneMonitor{}, 0
}

// TestMonitorPassesALanesLife: the monitor's checks hold over a real run
// (in monitored builds, where they are on).
func TestMonitorPassesALanesLife(t *testing.T) {
	done := make(chan struct{}, 8)
	l := newLanes(t, Config[int]{MaxConcurrent: 2,
		Activate: func(context.Context, int) error { return nil },
		OnExit:   func(int, Exit) { done <- struct{}{} }})
	for k := range 8 {
		if _, err := l.Wake(k); err != nil {
			t.Fatal(err)
		}
	}
	for range 8 {
		<-done
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mon.total != 0 || len(l.mon.active) != 0 {
		t.Errorf("the monitor counts %d activations inside Activate after all returned", l.mon.total)
	}
}
