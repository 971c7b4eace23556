package lanes

import (
	"context"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"
)

// activationSlots is the cap both sides of BenchmarkActivation run under.
const activationSlots = 8

// BenchmarkActivation wakes distinct keys, each activation an empty
// function, under MaxConcurrent 8 (lanes), against the same work as a
// goroutine per task under a golang.org/x/sync semaphore of 8 with a
// context.WithCancel per task (floor). The lanes sub-benchmark runs the
// floor for the same count in the same process and reports the ratio.
func BenchmarkActivation(b *testing.B) {
	b.Run("lanes", func(b *testing.B) {
		floor := timeSemaphoreFloor(b.N)
		b.ReportAllocs()
		b.ResetTimer()
		timeLanes(b, b.N)
		b.StopTimer()
		b.ReportMetric(float64(b.Elapsed())/float64(floor), "ratio")
	})
	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		timeSemaphoreFloor(b.N)
	})
}

// timeLanes wakes n distinct keys and waits for their activations.
func timeLanes(b *testing.B, n int) {
	var done sync.WaitGroup
	done.Add(n)
	l, err := New(context.Background(), Config[int]{
		MaxConcurrent: activationSlots,
		Activate: func(context.Context, int) error {
			done.Done()
			return nil
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for i := range n {
		if _, err := l.Wake(i); err != nil {
			b.Fatal(err)
		}
	}
	done.Wait()
}

// timeSemaphoreFloor runs n empty tasks, each in a goroutine of its own
// with a cancellable context, under a weighted semaphore of 8.
func timeSemaphoreFloor(n int) time.Duration {
	began := time.Now()
	sem := semaphore.NewWeighted(activationSlots)
	base := context.Background()
	var done sync.WaitGroup
	done.Add(n)
	for range n {
		go func() {
			defer done.Done()
			ctx, cancel := context.WithCancel(base)
			defer cancel()
			if err := sem.Acquire(ctx, 1); err != nil {
				return
			}
			sem.Release(1)
		}()
	}
	done.Wait()
	return time.Since(began)
}

// BenchmarkWakeCoalesced wakes a lane that already owes a follow-up: the
// cheapest and most frequent wake of a busy key.
func BenchmarkWakeCoalesced(b *testing.B) {
	release := make(chan struct{})
	l, err := New(context.Background(), Config[string]{
		Activate: func(ctx context.Context, _ string) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	defer close(release)
	for _, want := range []WakeResult{Started, Queued, Coalesced} {
		if r, err := l.Wake("busy"); r != want || err != nil {
			b.Fatalf("Wake = %v, %v; want %v", r, err, want)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if r, _ := l.Wake("busy"); r != Coalesced {
			b.Fatalf("Wake = %v, want Coalesced", r)
		}
	}
}

// BenchmarkWakeActivation wakes an idle key and waits until its
// activation, and its lane's step past it, have ended, with Metrics unset
// and set (to a Metrics that does nothing). Unset, the metrics cost no
// allocation, no lock and no clock reading; the allocations reported are
// the activation's own, its context and its goroutine's start, the same
// in both.
func BenchmarkWakeActivation(b *testing.B) {
	for _, bm := range []struct {
		name    string
		metrics Metrics
	}{{"metrics=unset", nil}, {"metrics=set", new(nopMetrics)}} {
		b.Run(bm.name, func(b *testing.B) {
			l, err := New(context.Background(), Config[int]{
				Activate: func(context.Context, int) error { return nil },
				Metrics:  bm.metrics,
			})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			b.ReportAllocs()
			for b.Loop() {
				if r, err := l.Wake(1); r != Started || err != nil {
					b.Fatalf("Wake = %v, %v; want Started", r, err)
				}
				// No wake is under way, so no Add races this Wait.
				l.activations.Wait()
			}
		})
	}
}
