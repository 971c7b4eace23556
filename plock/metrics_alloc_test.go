package plock_test

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/sqlite"
	"github.com/rivus/collab/plock"
)

// nopMetrics is a plock.Metrics that does nothing: what metrics cost
// beyond the work of a real one.
type nopMetrics struct{}

func (nopMetrics) Acquired(time.Duration) {}
func (nopMetrics) Refused()               {}
func (nopMetrics) GaveUp(time.Duration)   {}

// cycles acquires and releases the lock at path n times, and one more
// that another holder refuses in each, with metrics mt (nil: none); it
// returns the allocations and the time they took.
func cycles(tb testing.TB, p *platform.Platform, path string, mt plock.Metrics, n int) (allocs uint64, took time.Duration) {
	tb.Helper()
	ctx := context.Background()
	opts := plock.Options{Metrics: mt}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	for range n {
		l, err := plock.Acquire(ctx, p, path, opts)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := plock.Acquire(ctx, p, path, opts); err == nil {
			tb.Fatal("a second Acquire took a held lock")
		}
		if err := l.Release(); err != nil {
			tb.Fatal(err)
		}
	}
	took = time.Since(start)
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs, took
}

// modes are plock's two ways to lock, each with its platform.
var modes = []struct {
	name string
	p    *platform.Platform
	n    int // cycles that the allocation test counts
}{
	{"lockfile", platform.OS(), 500},
	{"sqlite", sqlite.OS(), 50},
}

// TestMetricsAllocations: metrics cost no allocation, unset or set: over
// many acquisitions, refusals and releases, Acquire with Metrics set
// allocates at most one allocation per cycle more than without (a
// cycle's two metrics calls would each cost one or more).
func TestMetricsAllocations(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.lock")
			cycles(t, mode.p, path, nil, 1) // the first use makes what later ones reuse
			// The fewest of three runs each: the count is the process's,
			// and a goroutine of an earlier test adds to some.
			unset, set := ^uint64(0), ^uint64(0)
			for range 3 {
				u, _ := cycles(t, mode.p, path, nil, mode.n)
				s, _ := cycles(t, mode.p, path, nopMetrics{}, mode.n)
				unset, set = min(unset, u), min(set, s)
			}
			if set > unset+uint64(mode.n) {
				t.Errorf("%d cycles allocate %d times with Metrics set and %d unset: metrics allocate", mode.n, set, unset)
			}
			t.Logf("allocations per cycle: %.2f unset, %.2f set", float64(unset)/float64(mode.n), float64(set)/float64(mode.n))
		})
	}
}

// BenchmarkMetrics measures an acquisition, a refusal and a release with
// Metrics set to a no-op against the same with Metrics unset, b.N cycles
// each, and reports the ratio of their times and the allocations that
// metrics add per cycle.
func BenchmarkMetrics(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "app.lock")
			unset, unsetTook := cycles(b, mode.p, path, nil, b.N)
			set, setTook := cycles(b, mode.p, path, nopMetrics{}, b.N)
			b.ReportMetric(float64(int64(set)-int64(unset))/float64(b.N), "extra-allocs/op")
			b.ReportMetric(float64(setTook)/float64(unsetTook), "set/unset")
		})
	}
}
