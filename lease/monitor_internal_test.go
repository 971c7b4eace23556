package lease

import (
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/internal/contract"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
	"github.com/rivus/collab/policy"
)

// monitorRun feeds steps to a fresh monitor through the shipped policy and
// returns the first broken duty, or "".
func monitorRun(steps ...struct {
	t policy.TriggerID
	f policy.Facts
}) (string, *leaseMonitor) {
	var mon leaseMonitor
	s := fsm.LeasePolicy.Initial()
	for _, st := range steps {
		r := fsm.LeasePolicy.Step(s, st.t, st.f)
		if broke := mon.check(s, st.t, st.f, r); broke != "" {
			return broke, &mon
		}
		if r.Verdict == policy.Fired {
			s = r.Next
		}
	}
	return "", &mon
}

type monStep = struct {
	t policy.TriggerID
	f policy.Facts
}

// acquired is an acquisition of a free key.
var acquired = []monStep{{policy.LeaseAcquire, 0}, {policy.LeaseLoaded, policy.LeaseFactRecordFree}, {policy.LeaseSaved, 0}}

func TestMonitorPassesTheManagersSteps(t *testing.T) {
	steps := append(append([]monStep{}, acquired...),
		monStep{policy.LeaseRenewDue, 0}, monStep{policy.LeaseRepoFailed, 0}, // a failed renewal, retried
		monStep{policy.LeaseRenewDue, 0}, monStep{policy.LeaseSaved, 0},
		monStep{policy.LeaseFenceTaken, policy.LeaseFactRecordOurs},
		monStep{policy.LeaseRelease, 0}, monStep{policy.LeaseLoaded, policy.LeaseFactRecordOurs}, monStep{policy.LeaseConflict, 0}, // a late renewal of ours
		monStep{policy.LeaseLoaded, policy.LeaseFactRecordOurs}, monStep{policy.LeaseSaved, 0},
		monStep{policy.LeaseRelease, 0}, monStep{policy.LeaseFenceTaken, 0}, monStep{policy.LeaseDeadlinePassed, 0})
	if broke, _ := monitorRun(steps...); broke != "" {
		t.Fatalf("the monitor refused a manager's steps: %s", broke)
	}
	lost := append(append([]monStep{}, acquired...),
		monStep{policy.LeaseRenewDue, 0}, monStep{policy.LeaseDeadlinePassed, 0}, monStep{policy.LeaseRepoFailed, 0}, // a late failure reaches a lost handle
		monStep{policy.LeaseRelease, 0}, monStep{policy.LeaseLoaded, 0})
	if broke, _ := monitorRun(lost...); broke != "" {
		t.Fatalf("the monitor refused a lost handle's steps: %s", broke)
	}
}

func TestMonitorNamesEachBrokenDuty(t *testing.T) {
	for _, tt := range []struct {
		name  string
		steps []monStep
		want  string
	}{
		{"a result with no call", []monStep{{policy.LeaseAcquire, 0}, {policy.LeaseLoaded, policy.LeaseFactRecordFree}, {policy.LeaseSaved, 0}, {policy.LeaseSaved, 0}}, "no write in flight"},
		{"a read's result for a write", []monStep{{policy.LeaseAcquire, 0}, {policy.LeaseLoaded, policy.LeaseFactRecordFree}, {policy.LeaseLoaded, policy.LeaseFactRecordFree}}, "Loaded fired with no read in flight"},
		{"Release during a call", append(append([]monStep{}, acquired...), monStep{policy.LeaseRenewDue, 0}, monStep{policy.LeaseRelease, 0}), "Release fired while a repository call is in flight"},
		{"Acquire twice", append(append([]monStep{}, acquired...), monStep{policy.LeaseAcquire, 0}), "Acquire fired at a handle that has stepped before"},
		{"a failure with no call", append(append([]monStep{}, acquired...), monStep{policy.LeaseRepoFailed, 0}), "RepoFailed fired with no repository call in flight"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			broke, mon := monitorRun(tt.steps...)
			if !strings.Contains(broke, tt.want) {
				t.Fatalf("broken duty %q, want %q", broke, tt.want)
			}
			report := mon.report(fsm.LeasePolicy, "k", broke)
			for _, want := range []string{`key "k"`, tt.want, "1. Idle --Acquire--> fired Acquiring / load"} {
				if !strings.Contains(report, want) {
					t.Errorf("report lacks %q:\n%s", want, report)
				}
			}
		})
	}
}

// TestMonitorNamesWhatAPolicyAsksAmiss: outputs no manager can carry out.
func TestMonitorNamesWhatAPolicyAsksAmiss(t *testing.T) {
	for _, tt := range []struct {
		name string
		t    policy.TriggerID
		out  policy.Outputs
		call policy.Outputs
		want string
	}{
		{"two calls", policy.LeaseRenewDue, policy.LeaseOutputRenew | policy.LeaseOutputLoad, 0, "two repository calls at once"},
		{"a call during a call", policy.LeaseRenewDue, policy.LeaseOutputRenew, policy.LeaseOutputLoad, "while one is in flight"},
		{"ended during a call", policy.LeaseDeadlinePassed, policy.LeaseOutputEndHandle, policy.LeaseOutputRenew, "ended with a repository call in flight"},
		{"fence unanswered", policy.LeaseFenceTaken, 0, 0, "both or neither"},
	} {
		mon := leaseMonitor{call: tt.call, steps: 1}
		if broke := mon.after(tt.t, tt.out); !strings.Contains(broke, tt.want) {
			t.Errorf("%s: broken duty %q, want %q", tt.name, broke, tt.want)
		}
	}
}

// BenchmarkMonitor steps a handle's life (acquire, renew, release) through
// the shipped policy, with the contract monitor's check and without it, in
// this process, and reports the monitor's cost per step. Without the build
// tag collabmonitor the manager makes no check at all: the cost is zero.
func BenchmarkMonitor(b *testing.B) {
	life := append(append([]monStep{}, acquired...),
		monStep{policy.LeaseRenewDue, 0}, monStep{policy.LeaseSaved, 0},
		monStep{policy.LeaseRelease, 0}, monStep{policy.LeaseLoaded, policy.LeaseFactRecordOurs}, monStep{policy.LeaseSaved, 0})
	p := fsm.LeasePolicy
	run := func(check bool) time.Duration {
		start := time.Now()
		for range b.N {
			var mon leaseMonitor
			s := p.Initial()
			for _, st := range life {
				r := p.Step(s, st.t, st.f)
				if check && mon.check(s, st.t, st.f, r) != "" {
					b.Fatal("the monitor refused the life of a handle")
				}
				s = r.Next
			}
		}
		return time.Since(start)
	}
	bare, checked := run(false), run(true)
	steps := float64(b.N * len(life))
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(bare.Nanoseconds())/steps, "step-ns")
	b.ReportMetric(float64(checked.Nanoseconds())/steps, "monitored-step-ns")
	b.ReportMetric(float64(checked-bare)/steps, "monitor-ns/step")
}

// TestMonitorEdgeNamesEachBrokenDuty plants each broken duty of the
// repository edge (monitor_edge.go) in a handle's notes and checks that
// the monitor names it.
func TestMonitorEdgeNamesEachBrokenDuty(t *testing.T) {
	m, err := NewManager(Config{TTL: 4 * time.Second, Heartbeat: time.Second, Repository: NewMemoryRepository()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	other := store.Snapshot{Generation: 2, Holder: platform.Identity{Host: "h", PID: 7}, TTL: time.Second}
	fired := func(out policy.Outputs) policy.Result { return policy.Result{Verdict: policy.Fired, Outputs: out} }
	self, err := m.p.Process.Self()
	if err != nil {
		t.Fatal(err)
	}
	here := store.Snapshot{Generation: 2, Holder: self, TTL: time.Second}
	for _, tt := range []struct {
		name  string
		h     handleNotes
		t     policy.TriggerID
		facts policy.Facts
		r     policy.Result
		want  string
	}{
		{"a conflict fired as a failure", handleNotes{mon: leaseMonitor{answered: monitoredCall{answer: answerConflict}}},
			policy.LeaseRepoFailed, 0, fired(policy.LeaseOutputScheduleRetry), "RepoFailed fired, but the repository answered a revision conflict"},
		{"a failure fired as saved", handleNotes{mon: leaseMonitor{answered: monitoredCall{answer: answerFailed}}},
			policy.LeaseSaved, 0, fired(0), "Saved fired, but the repository answered a failure"},
		{"a deadline from the write's end", handleNotes{writeStart: 9, rev: 3, mon: leaseMonitor{returned: true,
			answered: monitoredCall{answer: answerSaved, rev: 3, start: 5, end: 9}}},
			policy.LeaseSaved, 0, fired(policy.LeaseOutputArmDeadline), "the deadline counts from 9ns with revision 3, after the start 5ns"},
		{"fenced work without the fence", handleNotes{mon: leaseMonitor{returned: true}},
			policy.LeaseFenceTaken, policy.LeaseFactRecordOurs, fired(policy.LeaseOutputRunFenced), "FenceTaken fired while the handle holds no fence"},
		{"ours by holder", handleNotes{token: 1, mon: leaseMonitor{returned: true, fences: 1,
			fenceRead: monitoredCall{answer: answerLoaded, ok: true, rec: store.Record{Revision: 4, Snapshot: other}}}},
			policy.LeaseFenceTaken, policy.LeaseFactRecordOurs, fired(policy.LeaseOutputRunFenced), "recordOurs is true for generation 2"},
		{"a live holder judged dead", handleNotes{mon: leaseMonitor{answered: monitoredCall{answer: answerLoaded, ok: true,
			rec: store.Record{Revision: 4, Snapshot: other}}}},
			policy.LeaseLoaded, policy.LeaseFactHolderDead, fired(policy.LeaseOutputClaim), "holderDead given for holder"},
		{"a holder elsewhere judged local", handleNotes{mon: leaseMonitor{answered: monitoredCall{answer: answerLoaded, ok: true,
			rec: store.Record{Revision: 4, Snapshot: other}}}},
			policy.LeaseLoaded, policy.LeaseFactHolderLocal, fired(policy.LeaseOutputHeldError), "holderLocal is true for holder"},
		{"a holder here judged elsewhere", handleNotes{mon: leaseMonitor{answered: monitoredCall{answer: answerLoaded, ok: true,
			rec: store.Record{Revision: 4, Snapshot: here}}}},
			policy.LeaseLoaded, 0, fired(policy.LeaseOutputHeldError), "holderLocal is false for holder"},
		{"silence before the TTL", handleNotes{key: "k", mon: leaseMonitor{answered: monitoredCall{answer: answerLoaded, ok: true,
			rec: store.Record{Revision: 4, Snapshot: other}}}},
			policy.LeaseLoaded, policy.LeaseFactTtlElapsed, fired(policy.LeaseOutputClaim), "ttlElapsed given"},
	} {
		mon := tt.h.mon
		h := &Lease{m: m, key: tt.h.key, token: tt.h.token, mon: &mon}
		h.step.Wrote, h.step.WriteStart = tt.h.rev, tt.h.writeStart
		h.mon.answered.end = m.now() // a read that just returned
		m.mu.Lock()
		broke := m.checkEdgeLocked(h, tt.t, tt.facts, tt.r)
		m.mu.Unlock()
		if !strings.Contains(broke, tt.want) {
			t.Errorf("%s: broken duty %q, want %q", tt.name, broke, tt.want)
		}
	}
}

// handleNotes are the fields of a Lease the edge checks read.
type handleNotes struct {
	key        string
	token      Token
	rev        store.Revision
	writeStart time.Duration
	mon        leaseMonitor
}

// TestStoreMonitor: the store check catches a stale save and a second
// save over one revision, and passes saves that follow each other.
func TestStoreMonitor(t *testing.T) {
	repo := NewMemoryRepository()
	w := store.Write{Key: "k", Expected: 1}
	if broke := storeAnswerBroke(w, 2, 3, nil); !strings.Contains(broke, "after revision 2 of the key had been seen") {
		t.Errorf("a stale save passed: %q", broke)
	}
	if broke := storeAnswerBroke(w, 1, 1, nil); !strings.Contains(broke, "not a newer one") {
		t.Errorf("a save that returned its own revision passed: %q", broke)
	}
	if broke := storeAnswerBroke(w, 5, 0, ErrLost); broke != "" {
		t.Errorf("a failed save broke %q", broke)
	}
	for rev := store.Revision(0); rev < 8; rev++ {
		if storeSavedOver(repo, "k", rev, rev+1) {
			t.Fatalf("the save over revision %d, the first over it, was taken for a second", rev)
		}
	}
	if !storeSavedOver(repo, "k", 7, 9) {
		t.Error("a second save over revision 7 passed")
	}
	if got := storeFloor(repo, "k"); got != 9 {
		t.Errorf("floor %d, want 9", got)
	}
}

// TestMonitorNamesABreakAmiss: a break that keeps the broken generation,
// writes no broken tombstone, or ends a live holder without force is
// reported, naming the key; a break of a dead holder, or of a live one
// with force, is not.
func TestMonitorNamesABreakAmiss(t *testing.T) {
	defer contract.SetFail(func(report string) { panic(report) })()
	f := platformtest.New(t)
	alive := f.Processes.Start()
	dead := f.Processes.Start()
	f.Processes.Kill(dead.PID)
	f.Processes.Reap(dead.PID)
	rec := func(holder platform.Identity) store.Snapshot { return store.Snapshot{Generation: 4, Holder: holder} }
	tomb := store.Snapshot{Generation: 5, Released: true, Broken: true}
	report := func(rec, tomb store.Snapshot, force bool) (msg string) {
		defer func() { msg, _ = recover().(string) }()
		monitorBreak(f.Platform, "job", rec, tomb, force)
		return ""
	}
	kept := tomb
	kept.Generation = 4
	unbroken := tomb
	unbroken.Broken = false
	for _, tc := range []struct {
		name      string
		rec, tomb store.Snapshot
		force     bool
		want      string
	}{
		{"the broken generation kept", rec(dead), kept, false, "writes generation 4 over generation 4"},
		{"not a broken tombstone", rec(dead), unbroken, false, "not a broken tombstone"},
		{"a live holder without force", rec(alive), tomb, false, "may still run"},
		{"a dead holder", rec(dead), tomb, false, ""},
		{"a live holder with force", rec(alive), tomb, true, ""},
	} {
		msg := report(tc.rec, tc.tomb, tc.force)
		if tc.want == "" && msg != "" || tc.want != "" && (!strings.HasPrefix(msg, `lease: contract monitor: key "job": `) || !strings.Contains(msg, tc.want)) {
			t.Errorf("%s: report %q, want %q", tc.name, msg, tc.want)
		}
	}
}
