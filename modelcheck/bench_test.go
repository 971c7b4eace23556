package modelcheck_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/worldmodel"
)

// BenchmarkExplore explores the lease world of the shipped policy with four
// holders and no symmetry reduction, with one worker and with one per core,
// and reports distinct states per second and bytes allocated per state
// (on the Go heap and in tables mapped outside it).
// Its baseline, run in the same process, is the checker alone on a
// trivial world of the same size (16 bytes), about as many states and
// moves per state (a 4-dimensional grid walked one step at a time), with
// one worker; the ratio says how close the lease world comes to what the
// checker's visited set allows on this machine.
//
// With more than one worker it also explores with one, interleaved, and
// reports the speedup; and, as the machine's own ceiling for it, the
// speedup of that many independent one-worker explorations running at
// once over one running alone (each stopped at ceilingStates): what the
// cores give this work with no coordination at all. On a virtual machine
// whose cores share a physical one, or memory, the ceiling is well below
// the number of cores.
func BenchmarkExplore(b *testing.B) {
	bounds := worldmodel.DefaultLeaseBounds()
	bounds.Holders = 4
	m, err := worldmodel.LeaseModel(fsm.LeasePolicy, bounds)
	if err != nil {
		b.Fatal(err)
	}
	m.Canonical = nil // no symmetry reduction
	for _, workers := range []int{1, runtime.NumCPU()} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var lease, base, single, solo, together exploreRate
			var allocated uint64
			for b.Loop() {
				if workers > 1 {
					runtime.GC()
					solo.add(independent(m, 1))
					runtime.GC()
					together.add(independent(m, workers))
					runtime.GC()
					r := modelcheck.Check(m, modelcheck.Options{Workers: 1})
					single.add(r.States, r.Moves, r.Elapsed)
				}
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				mapped := modelcheck.MappedBytes()
				r := modelcheck.Check(m, modelcheck.Options{Workers: workers})
				runtime.ReadMemStats(&after)
				if r.Verdict != modelcheck.Passed {
					b.Fatal(r.Summary())
				}
				allocated += after.TotalAlloc - before.TotalAlloc + uint64(modelcheck.MappedBytes()-mapped)
				lease.add(r.States, r.Moves, r.Elapsed)
				runtime.GC()
				g := modelcheck.Check(gridModel(45), modelcheck.Options{})
				base.add(g.States, g.Moves, g.Elapsed)
			}
			b.ReportMetric(0, "ns/op") // two explorations per op: the sum means nothing
			b.ReportMetric(lease.perSecond(), "states/s")
			b.ReportMetric(float64(allocated)/float64(lease.states), "bytes/state")
			b.ReportMetric(float64(lease.states)/float64(b.N), "states")
			b.ReportMetric(float64(lease.moves)/float64(lease.states), "moves/state")
			b.ReportMetric(base.perSecond(), "baseline-states/s")
			b.ReportMetric(lease.perSecond()/base.perSecond(), "x-baseline")
			if workers > 1 {
				b.ReportMetric(lease.perSecond()/single.perSecond(), "speedup")
				b.ReportMetric(together.perSecond()/solo.perSecond(), "ceiling")
			}
		})
	}
}

// ceilingStates bounds each exploration of the ceiling: enough for its
// visited set to outgrow the caches, as the full one does.
const ceilingStates = 4_000_000

// independent runs n one-worker explorations of m at once, each stopped
// at ceilingStates, and returns their states and moves and the time they
// took together. Each has a Next of its own (m.Fork's): a search of one
// worker calls Next, whose scratch world two searches must not share.
func independent(m modelcheck.Model[worldmodel.LeaseWorld], n int) (states, moves int, took time.Duration) {
	results := make([]modelcheck.Result[worldmodel.LeaseWorld], n)
	models := make([]modelcheck.Model[worldmodel.LeaseWorld], n)
	for i := range models {
		models[i] = m
		models[i].Next = m.Fork()
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = modelcheck.Check(models[i], modelcheck.Options{Workers: 1, MaxStates: ceilingStates})
		}()
	}
	wg.Wait()
	took = time.Since(start)
	for _, r := range results {
		states, moves = states+r.States, moves+r.Moves
	}
	return states, moves, took
}

type exploreRate struct {
	states, moves int
	elapsed       time.Duration
}

func (r *exploreRate) add(states, moves int, d time.Duration) {
	r.states, r.moves, r.elapsed = r.states+states, r.moves+moves, r.elapsed+d
}

func (r *exploreRate) perSecond() float64 { return float64(r.states) / r.elapsed.Seconds() }

// gridModel is the baseline model: n^4 worlds of 16 bytes, each with nine
// moves (a step up or down in one of four dimensions, or a flip).
func gridModel(n uint8) modelcheck.Model[[16]uint8] {
	return modelcheck.Model[[16]uint8]{
		Name: "grid",
		Init: []([16]uint8){{}},
		Next: func(w [16]uint8, yield func(string, [16]uint8)) {
			for d := range 4 {
				up, down := w, w
				up[d] = (w[d] + 1) % n
				down[d] = (w[d] + n - 1) % n
				yield("up", up)
				yield("down", down)
			}
			flip := w
			flip[15] ^= 1
			yield("flip", flip)
		},
	}
}
