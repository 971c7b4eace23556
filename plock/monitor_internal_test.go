package plock

import (
	"strings"
	"testing"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/internal/contract"
	"github.com/rivus/collab/platform"
)

// TestMonitorNamesEachBrokenDuty plants each broken duty in a registry of
// its own and checks that the monitor names it.
func TestMonitorNamesEachBrokenDuty(t *testing.T) {
	defer contract.SetFail(func(report string) { panic(report) })()
	newTask := func(r *registry, path string) *task {
		tk, _ := r.request(newTurnKey(nil, path), fsm.TurnPolicy, true)
		return tk
	}
	for _, tt := range []struct {
		name string
		f    func(r *registry)
		want string
	}{
		{"attempt without the turn", func(r *registry) {
			newTask(r, "p")
			r.attempting(newTask(r, "p")) // the second task waits for its turn
		}, "without owning its turn"},
		{"attempt while held", func(r *registry) {
			a := newTask(r, "p")
			r.attempting(a)
			r.attempted(a, true)
			r.attempting(a)
		}, "while another task of this process holds it"},
		{"attempt twice", func(r *registry) {
			a := newTask(r, "p")
			r.attempting(a)
			r.attempting(a)
		}, "attempt the lock at once"},
		{"release unheld", func(r *registry) { r.released(newTask(r, "p")) }, "does not hold"},
	} {
		r := &registry{queues: map[turnKey]*turnQueue{}, changed: make(chan struct{})}
		msg := func() (msg string) {
			defer func() { msg, _ = recover().(string) }()
			tt.f(r)
			return ""
		}()
		if !strings.Contains(msg, "plock: contract monitor: lock p: ") || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: report %q, want one naming %q", tt.name, msg, tt.want)
		}
	}
}

// TestMonitorNamesAReclaimOfAChangedStamp: moving away a lock file whose
// stamp is no longer the one judged dead breaks duty 3, and the report
// names the file; the stamp judged dead passes.
func TestMonitorNamesAReclaimOfAChangedStamp(t *testing.T) {
	defer contract.SetFail(func(report string) { panic(report) })()
	f := newFileFake(t)
	b := &fileBackend{f.Platform, lockPath(f)}
	writeStamp(t, b.path, f.Processes.Start())
	judged, err := f.FS.ReadFile(b.path, platform.MaxIdentityJSON)
	if err != nil {
		t.Fatal(err)
	}
	reclaim := func(stamp []byte) (msg string) {
		defer func() { msg, _ = recover().(string) }()
		b.reclaiming(stamp)
		return ""
	}
	if msg := reclaim(judged); msg != "" {
		t.Fatalf("the stamp judged dead: report %q, want none", msg)
	}
	if msg := reclaim([]byte("another stamp")); !strings.Contains(msg, "plock: contract monitor: lock file "+b.path+": ") || !strings.Contains(msg, "no longer holds the stamp judged dead") {
		t.Errorf("a changed stamp: report %q, want one naming the file", msg)
	}
}
