package bench

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivus/collab/lanes"
	"k8s.io/client-go/util/workqueue"
)

// shape is a workload: keys served by workers (lanes' MaxConcurrent, or
// workqueue's worker goroutines). Each key is woken once to begin with;
// then each processing of a key wakes it again rewakes times while it is
// processed, until it has been processed rounds times. A key woken while
// it is processed is processed once more after, however many wakes came
// (both lanes and workqueue promise this), so the items and the items
// per wake are set by the shape, equal on both sides, and the time per
// item compares like with like.
type shape struct {
	keys, workers, rounds, rewakes int
}

func (s shape) String() string { return fmt.Sprintf("keys=%d,workers=%d", s.keys, s.workers) }

// items is how many processings the shape makes; wakes, how many wakes.
func (s shape) items() int { return s.keys * s.rounds }
func (s shape) wakes() int { return s.keys + s.keys*(s.rounds-1)*s.rewakes }

var shapes = []shape{
	{keys: 1000, workers: 8, rounds: 200, rewakes: 2},
	{keys: 100_000, workers: 8, rounds: 2, rewakes: 2},
	{keys: 10, workers: 8, rounds: 20_000, rewakes: 2},
}

// producers is how many goroutines make the first wakes, and all the
// wakes of a burst.
const producers = 4

// process is the work of one item: a little CPU.
func process(key string) {
	h := uint32(2166136261)
	for i := 0; i < 64; i++ {
		h = (h ^ uint32(key[i%len(key)])) * 16777619
	}
	sink.Add(h)
}

var sink atomic.Uint32

func keyNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "key-" + strconv.Itoa(i)
	}
	return names
}

// keyIndex is the number in a key's name.
func keyIndex(key string) int {
	i, err := strconv.Atoi(key[len("key-"):])
	if err != nil {
		panic(err)
	}
	return i
}

// workload is one run of a shape: it processes an item, wakes the key
// again as the shape says, and says when the last item is done.
type workload struct {
	s      shape
	rounds []atomic.Int32 // processings so far, by key
	left   atomic.Int64   // items still to process
	done   chan struct{}
}

func newWorkload(s shape) *workload {
	w := &workload{s: s, rounds: make([]atomic.Int32, s.keys), done: make(chan struct{})}
	w.left.Store(int64(s.items()))
	return w
}

// item processes key, waking it again first while rounds remain.
func (w *workload) item(key string, wake func(string)) {
	if w.rounds[keyIndex(key)].Add(1) < int32(w.s.rounds) {
		for range w.s.rewakes {
			wake(key)
		}
	}
	process(key)
	if w.left.Add(-1) == 0 {
		close(w.done)
	}
}

// seed wakes every key once, from producers goroutines.
func seed(names []string, wake func(string)) {
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := p; i < len(names); i += producers {
				wake(names[i])
			}
		}()
	}
	wg.Wait()
}

// runLanes runs one workload through lanes and returns the items
// processed.
func runLanes(b *testing.B, s shape, names []string) int64 {
	w := newWorkload(s)
	var l *lanes.Lanes[string]
	wake := func(key string) {
		if _, err := l.Wake(key); err != nil {
			b.Error(err)
		}
	}
	l, err := lanes.New(context.Background(), lanes.Config[string]{
		MaxConcurrent: s.workers,
		Activate: func(_ context.Context, key string) error {
			w.item(key, wake)
			return nil
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	seed(names, wake)
	<-w.done
	return int64(s.items())
}

// runWorkqueue runs one workload through a rate-limiting workqueue with
// s.workers worker goroutines, as controllers use it, and returns the
// items processed.
func runWorkqueue(b *testing.B, s shape, names []string) int64 {
	w := newWorkload(s)
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	workers := startWorkers(q, s.workers, func(key string) { w.item(key, q.Add) })
	seed(names, q.Add)
	<-w.done
	q.ShutDown()
	workers.Wait()
	return int64(s.items())
}

// side is one of the two queues under comparison.
type side struct {
	name string
	run  func(*testing.B, shape, []string) int64
}

var sides = []side{{"lanes", runLanes}, {"workqueue", runWorkqueue}}

// BenchmarkLanesVsWorkqueue runs each shape through both, interleaved,
// and reports the time per processed item of each, with items per wake,
// which the shape sets, and their ratio (lanes to workqueue): the median
// of the ratios of each interleaved pair, as a pair shares the machine's
// state of the moment, and a burst of noise on a shared machine skews
// one pair, not the median.
func BenchmarkLanesVsWorkqueue(b *testing.B) {
	for _, s := range shapes {
		b.Run(s.String(), func(b *testing.B) {
			names := keyNames(s.keys)
			var took [2]time.Duration
			var ratios []float64
			runtime.GC()
			for b.Loop() {
				var pair [2]time.Duration
				for i, sd := range sides {
					start := time.Now()
					sd.run(b, s, names)
					pair[i] = time.Since(start)
					took[i] += pair[i]
				}
				ratios = append(ratios, float64(pair[0])/float64(pair[1]))
			}
			items := float64(s.items() * b.N)
			b.ReportMetric(float64(took[0])/items, "lanes-ns/item")
			b.ReportMetric(float64(took[1])/items, "workqueue-ns/item")
			b.ReportMetric(float64(s.items())/float64(s.wakes()), "items/wake")
			b.ReportMetric(median(ratios), "ratio/item")
		})
	}
}

// median returns the median of xs, which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// BenchmarkKeyed runs each shape through lanes and through workqueue as
// sub-benchmarks of their own (for profiles, and for benchstat), each
// reporting ns/item and items/wake; BenchmarkLanesVsWorkqueue runs them
// interleaved and reports the ratio.
func BenchmarkKeyed(b *testing.B) {
	for _, s := range shapes {
		names := keyNames(s.keys)
		for _, sd := range sides {
			b.Run(s.String()+"/"+sd.name, func(b *testing.B) {
				var items int64
				for b.Loop() {
					items += sd.run(b, s, names)
				}
				b.ReportMetric(float64(b.Elapsed())/float64(items), "ns/item")
				b.ReportMetric(float64(s.items())/float64(s.wakes()), "items/wake")
			})
		}
	}
}

// burst is an open-loop workload: producers wake keys as fast as they
// can, wakes keys many times over, while workers drain them.
type burst struct{ keys, workers, wakes int }

func (s burst) String() string { return fmt.Sprintf("keys=%d,workers=%d", s.keys, s.workers) }

var bursts = []burst{{1000, 8, 200_000}, {100_000, 8, 200_000}, {10, 8, 200_000}}

// BenchmarkBurst wakes keys from producers goroutines as fast as they
// can and reports, for each side, the time per wake and the items per
// wake. Here the items per wake is a result, not a setting: the side that
// drains more slowly merges more wakes and does fewer items, so compare
// per wake, or per item only where the items per wake agree.
func BenchmarkBurst(b *testing.B) {
	for _, s := range bursts {
		b.Run(s.String(), func(b *testing.B) {
			names := keyNames(s.keys)
			var took [2]time.Duration
			var items [2]int64
			runtime.GC()
			for b.Loop() {
				for i, run := range []func(burst, []string) int64{burstLanes, burstWorkqueue} {
					start := time.Now()
					items[i] += run(s, names)
					took[i] += time.Since(start)
				}
			}
			wakes := float64(s.wakes * b.N)
			b.ReportMetric(float64(took[0])/wakes, "lanes-ns/wake")
			b.ReportMetric(float64(took[1])/wakes, "workqueue-ns/wake")
			b.ReportMetric(float64(items[0])/wakes, "lanes-items/wake")
			b.ReportMetric(float64(items[1])/wakes, "workqueue-items/wake")
		})
	}
}

// produce makes s.wakes wakes from producers goroutines, each over its
// own run of keys.
func produce(s burst, names []string, wake func(string)) {
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

func burstLanes(s burst, names []string) int64 {
	var items atomic.Int64
	var idle sync.WaitGroup // an activation to end for each wake not merged
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
		panic(err)
	}
	defer l.Close()
	produce(s, names, func(key string) {
		idle.Add(1)
		r, err := l.Wake(key)
		if err != nil {
			panic(err)
		}
		if r == lanes.Coalesced {
			idle.Done()
		}
	})
	idle.Wait()
	return items.Load()
}

func burstWorkqueue(s burst, names []string) int64 {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	var items atomic.Int64
	workers := startWorkers(q, s.workers, func(key string) {
		process(key)
		items.Add(1)
	})
	produce(s, names, q.Add)
	q.ShutDownWithDrain()
	workers.Wait()
	return items.Load()
}

// startWorkers starts n worker goroutines on q, the way controllers run
// them: each takes a key, hands it to item, forgets its rate limit and
// marks it done. They end once q shuts down; wait for them on the result.
func startWorkers(q workqueue.TypedRateLimitingInterface[string], n int, item func(string)) *sync.WaitGroup {
	var workers sync.WaitGroup
	for range n {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				item(key)
				q.Forget(key)
				q.Done(key)
			}
		}()
	}
	return &workers
}
