package lease_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
)

// nopMetrics is a lease.Metrics that does nothing: what metrics cost
// beyond the work of a real one.
type nopMetrics struct{}

func (nopMetrics) AddHeld(int)               {}
func (nopMetrics) Acquired(bool, bool)       {}
func (nopMetrics) Renewed(time.Duration)     {}
func (nopMetrics) RenewalFailed()            {}
func (nopMetrics) Lost(lease.LossCause)      {}
func (nopMetrics) FenceWaited(time.Duration) {}

// cycleAllocs returns the allocations of a manager with metrics mt
// (nil: none) that acquires and releases a key n times, from its start
// to its Close, which waits for the reports of every event: unlike
// testing.AllocsPerRun, it counts the reports' work, which the manager
// does on a goroutine of its own.
func cycleAllocs(tb testing.TB, mt lease.Metrics, n int) (allocs uint64, took time.Duration) {
	tb.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	m, err := lease.NewManager(lease.Config{TTL: time.Minute, Heartbeat: 15 * time.Second, Repository: lease.NewMemoryRepository(), Metrics: mt})
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	for range n {
		h, err := m.Acquire(ctx, "task:42")
		if err != nil {
			tb.Fatal(err)
		}
		if err := h.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	if err := m.Close(); err != nil {
		tb.Fatal(err)
	}
	took = time.Since(start)
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs, took
}

// TestMetricsAllocations: metrics cost no allocation, unset or set: a
// manager that feeds a Metrics allocates, over a thousand acquisitions
// and releases, at most one allocation per cycle more than one without
// (a cycle's three metrics calls would each cost one or more).
func TestMetricsAllocations(t *testing.T) {
	const n = 1000
	// The fewest of three runs each: the count is the process's, and a
	// goroutine of an earlier test, or the race detector, adds to some.
	unset, set := ^uint64(0), ^uint64(0)
	for range 3 {
		u, _ := cycleAllocs(t, nil, n)
		s, _ := cycleAllocs(t, nopMetrics{}, n)
		unset, set = min(unset, u), min(set, s)
	}
	if set > unset+n {
		t.Errorf("%d cycles allocate %d times with Metrics set and %d unset: metrics allocate", n, set, unset)
	}
	t.Logf("allocations per acquisition and release: %.2f unset, %.2f set", float64(unset)/n, float64(set)/n)
}

// BenchmarkMetrics measures acquisition and release on the memory
// repository with Metrics set to a no-op against the same with Metrics
// unset, b.N cycles each, and reports the ratio of their times and the
// allocations that metrics add per cycle.
func BenchmarkMetrics(b *testing.B) {
	unset, unsetTook := cycleAllocs(b, nil, b.N)
	set, setTook := cycleAllocs(b, nopMetrics{}, b.N)
	b.ReportMetric(float64(int64(set)-int64(unset))/float64(b.N), "extra-allocs/op")
	b.ReportMetric(float64(setTook)/float64(unsetTook), "set/unset")
}
