package lanes

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

// BenchmarkWake measures a wake of a fresh key through to the end of its
// activation, against the floor: a bare goroutine that takes a slot of a
// buffered-channel semaphore, runs the same no-op and gives the slot
// back. Both run b.N times in this process; x-floor is their ratio.
func BenchmarkWake(b *testing.B) {
	slots := runtime.GOMAXPROCS(0)
	floor := timeFloor(b.N, slots)

	var done sync.WaitGroup
	l, err := New(context.Background(), Config[int]{
		MaxConcurrent: slots,
		Activate: func(context.Context, int) error {
			noop()
			done.Done()
			return nil
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		done.Add(1)
		if _, err := l.Wake(i); err != nil {
			b.Fatal(err)
		}
	}
	done.Wait()
	b.StopTimer()
	perWake := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	perFloor := float64(floor.Nanoseconds()) / float64(b.N)
	b.ReportMetric(perFloor, "floor-ns/op")
	b.ReportMetric(perWake/perFloor, "x-floor")
}

// timeFloor runs n no-ops each in a goroutine of its own under a
// semaphore of slots, and returns how long they took.
func timeFloor(n, slots int) time.Duration {
	sem := make(chan struct{}, slots)
	var done sync.WaitGroup
	began := time.Now()
	for range n {
		done.Add(1)
		go func() {
			sem <- struct{}{}
			noop()
			<-sem
			done.Done()
		}()
	}
	done.Wait()
	return time.Since(began)
}

//go:noinline
func noop() {}
