package modelcheck_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/worldmodel"
)

// BenchmarkExplore explores the lease world of the shipped policy with four
// holders and no symmetry reduction, with one worker and with one per core,
// and reports distinct states per second and bytes allocated per state.
// Its baseline, run in the same process, is the checker alone on a
// trivial world of the same size (16 bytes), about as many states and
// moves per state (a 4-dimensional grid walked one step at a time), with
// one worker; the ratio says how close the lease world comes to what the
// checker's visited set allows on this machine.
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
			var lease, base exploreRate
			var allocated uint64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				r := modelcheck.Check(m, modelcheck.Options{Workers: workers})
				runtime.ReadMemStats(&after)
				if r.Verdict != modelcheck.Passed {
					b.Fatal(r.Summary())
				}
				allocated += after.TotalAlloc - before.TotalAlloc
				lease.add(r.States, r.Moves, r.Elapsed)
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
		})
	}
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
