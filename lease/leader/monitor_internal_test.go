package leader

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/internal/contract"
	"github.com/rivus/collab/lease"
)

// TestMonitorNamesEachBrokenDuty: letting the lease go while Lead's
// context is live, calling OnStopped while the lease is held, beginning
// Lead under a live context on an ended lease, and campaigning again
// before the term's lease is closed are each reported, naming the key and the term; the right order is not.
func TestMonitorNamesEachBrokenDuty(t *testing.T) {
	defer contract.SetFail(func(report string) { panic(report) })()
	m, err := lease.NewManager(lease.Config{TTL: time.Minute, Heartbeat: time.Second, Repository: lease.NewMemoryRepository()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l, err := m.Acquire(context.Background(), "job")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	term := &leaderTerm{lease: l, token: l.Token(), cancel: cancel, leadCtx: ctx}
	report := func(check func()) (msg string) {
		defer func() { msg, _ = recover().(string) }()
		check()
		return ""
	}
	prefix := `leader: contract monitor: key "job", term 1: `
	if msg := report(func() { campaigning(l) }); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, "before the term's lease is closed") {
		t.Errorf("a campaign before the term's lease is closed: report %q", msg)
	}
	if msg := report(func() { campaigning(nil) }); msg != "" {
		t.Errorf("the first campaign: report %q, want none", msg)
	}
	if msg := report(term.releasing); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, "Lead's context is live") {
		t.Errorf("release under a live context: report %q", msg)
	}
	if msg := report(term.stopping); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, "still held") {
		t.Errorf("OnStopped under a held lease: report %q", msg)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if msg := report(term.leading); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, "lease that has ended") {
		t.Errorf("Lead under a live context on an ended lease: report %q", msg)
	}
	cancel(nil)
	if msg := report(term.leading) + report(term.releasing) + report(term.stopping) + report(func() { campaigning(l) }); msg != "" {
		t.Errorf("the right order: report %q, want none", msg)
	}
}
