package bench

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivus/collab/lanes"
	"k8s.io/client-go/util/workqueue"
)

// shape is a workload: wakes spread over keys, served by workers (lanes'
// MaxConcurrent, or workqueue's worker goroutines). Each wake comes from
// one of the producers; a key is woken again and again, also while it is
// processed.
type shape struct {
	keys, workers, wakes int
}

func (s shape) String() string { return fmt.Sprintf("keys=%d,workers=%d", s.keys, s.workers) }

var shapes = []shape{{keys: 1000, workers: 8, wakes: 200_000}, {keys: 100_000, workers: 8, wakes: 200_000}, {keys: 10, workers: 8, wakes: 200_000}}

// producers is how many goroutines wake keys at once.
const producers = 4

// process is the work of one item: a little CPU, so that wakes arrive
// while keys are processed.
func process(key string) {
	h := uint32(2166136261)
	for i := 0; i < 64; i++ {
		h = (h ^ uint32(key[i%len(key)])) * 16777619
	}
	sink.Add(h)
}

var sink atomic.Uint32

// produce wakes keys until s.wakes wakes are made, from producers
// goroutines, each over its own run of keys.
func produce(s shape, names []string, wake func(string)) {
	var wg sync.WaitGroup
	per := s.wakes / producers
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				wake(names[(p*per+i)*7919%s.keys])
			}
		}()
	}
	wg.Wait()
}

func keyNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "key-" + strconv.Itoa(i)
	}
	return names
}

// runLanes runs one workload through lanes and returns the items
// processed.
func runLanes(b *testing.B, s shape, names []string) int64 {
	var items atomic.Int64
	var idle sync.WaitGroup
	l, err := lanes.New(context.Background(), lanes.Config[string]{
		MaxConcurrent: s.workers,
		Activate: func(_ context.Context, key string) error {
			process(key)
			items.Add(1)
			return nil
		},
		OnExit: func(string, lanes.Exit) { idle.Done() },
	})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	produce(s, names, func(key string) {
		idle.Add(1) // an activation to end, unless the wake merged
		r, err := l.Wake(key)
		if err != nil {
			b.Error(err)
		}
		if err != nil || r == lanes.Coalesced {
			idle.Done()
		}
	})
	idle.Wait()
	return items.Load()
}

// runWorkqueue runs one workload through a rate-limiting workqueue with
// s.workers worker goroutines, as controllers use it, and returns the
// items processed.
func runWorkqueue(b *testing.B, s shape, names []string) int64 {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	var items atomic.Int64
	var workers sync.WaitGroup
	for range s.workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				process(key)
				items.Add(1)
				q.Forget(key)
				q.Done(key)
			}
		}()
	}
	produce(s, names, func(key string) { q.Add(key) })
	q.ShutDownWithDrain()
	workers.Wait()
	return items.Load()
}

// BenchmarkLanesVsWorkqueue runs each shape through both, interleaved,
// and reports per processed item and per wake, the ratio of lanes to
// workqueue per item, and items per wake for each (a side that drains
// more slowly merges more wakes: compare per item at equal merging).
func BenchmarkLanesVsWorkqueue(b *testing.B) {
	for _, s := range shapes {
		b.Run(s.String(), func(b *testing.B) {
			names := keyNames(s.keys)
			var lanesTime, wqTime float64
			var lanesItems, wqItems int64
			runtime.GC()
			for b.Loop() {
				start := time.Now()
				lanesItems += runLanes(b, s, names)
				mid := time.Now()
				wqItems += runWorkqueue(b, s, names)
				lanesTime += float64(mid.Sub(start))
				wqTime += float64(time.Since(mid))
			}
			n := float64(b.N)
			wakes := float64(s.wakes) * n
			b.ReportMetric(lanesTime/float64(lanesItems), "lanes-ns/item")
			b.ReportMetric(wqTime/float64(wqItems), "workqueue-ns/item")
			b.ReportMetric(lanesTime/wakes, "lanes-ns/wake")
			b.ReportMetric(wqTime/wakes, "workqueue-ns/wake")
			b.ReportMetric(float64(lanesItems)/wakes, "lanes-items/wake")
			b.ReportMetric(float64(wqItems)/wakes, "workqueue-items/wake")
			b.ReportMetric((lanesTime/float64(lanesItems))/(wqTime/float64(wqItems)), "ratio/item")
		})
	}
}

// BenchmarkKeyed runs each shape through lanes and through workqueue as
// sub-benchmarks of their own (for profiles, and for benchstat), each
// reporting ns/item and items/wake; BenchmarkLanesVsWorkqueue runs them
// interleaved and reports the ratio.
func BenchmarkKeyed(b *testing.B) {
	for _, s := range shapes {
		names := keyNames(s.keys)
		for _, side := range []struct {
			name string
			run  func(*testing.B, shape, []string) int64
		}{{"lanes", runLanes}, {"workqueue", runWorkqueue}} {
			b.Run(s.String()+"/"+side.name, func(b *testing.B) {
				var items int64
				for b.Loop() {
					items += side.run(b, s, names)
				}
				b.ReportMetric(float64(b.Elapsed())/float64(items), "ns/item")
				b.ReportMetric(float64(items)/float64(s.wakes*b.N), "items/wake")
			})
		}
	}
}
