package lease_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform/platformtest"
)

// metricsLog is a lease.Metrics that writes each call down.
type metricsLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *metricsLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, fmt.Sprintf(format, args...))
}

func (l *metricsLog) AddHeld(d int) { l.add("held %+d", d) }
func (l *metricsLog) Acquired(takeover, dead bool) {
	l.add("acquired takeover=%v dead=%v", takeover, dead)
}
func (l *metricsLog) Renewed(took time.Duration)  { l.add("renewed in %v", took) }
func (l *metricsLog) RenewalFailed()              { l.add("renewal failed") }
func (l *metricsLog) Lost(c lease.LossCause)      { l.add("lost: %v", c) }
func (l *metricsLog) FenceWaited(d time.Duration) { l.add("fence waited %v", d) }
func (l *metricsLog) log() []string               { l.mu.Lock(); defer l.mu.Unlock(); return slices.Clone(l.calls) }

// TestMetrics: a manager's metrics hear each acquisition (a takeover by
// its kind), renewal, failure, loss by cause, release and fence wait.
func TestMetrics(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	mt := &metricsLog{}
	dead := f.Processes.Start()
	writeBehind(t, repo, "taken", store.Snapshot{Generation: 1, Holder: dead, TTL: ttl})
	f.Processes.Kill(dead.PID)
	m, rec := newManager(t, f.Platform, repo, func(c *lease.Config) { c.Metrics = mt })
	free := mustAcquire(t, m, "free")
	taken := mustAcquire(t, m, "taken")
	if err := free.RunFenced(t.Context(), func(context.Context, lease.Token) error { return nil }); err != nil {
		t.Fatal(err)
	}
	step(t, f.Clock, hb) // both renewed, in one batch
	rec.waitCount(t, lease.Renewed, 2)
	if err := free.Close(); err != nil {
		t.Fatal(err)
	}
	repo.failNext(-1)
	for taken.Err() == nil {
		step(t, f.Clock, hb/4)
	}
	rec.waitCount(t, lease.Lost, 1)
	failures, _ := rec.of(lease.RenewalFailed)
	want := []string{"held +1", "acquired takeover=false dead=false", "held +1", "acquired takeover=true dead=true",
		"fence waited 0s", "renewed in 0s", "renewed in 0s", "held -1"}
	for range failures {
		want = append(want, "renewal failed")
	}
	want = append(want, "held -1", "lost: deadline")
	if got := mt.log(); !slices.Equal(got, want) {
		t.Fatalf("metrics heard\n%q\nwant\n%q", got, want)
	}
}
