package modelcheck

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// TestPoolRunsEachWorkerOncePerRun: every run calls f once for each
// worker, after the previous run has ended, whether the workers spin or
// park between runs; a panic reaches the caller and the pool runs on.
func TestPoolRunsEachWorkerOncePerRun(t *testing.T) {
	for _, spins := range []int{0, 1, 1000} {
		t.Run(fmt.Sprintf("spins=%d", spins), func(t *testing.T) {
			saved := poolSpins
			poolSpins = spins
			defer func() { poolSpins = saved }()
			const workers, runs = 4, 2000
			p := newPool(workers)
			defer p.stop()
			var calls [workers]atomic.Int64
			var busy atomic.Int64 // calls of the current run under way
			for r := range runs {
				p.run(func(k int) {
					if n := calls[k].Add(1); n != int64(r+1) {
						t.Errorf("run %d: worker %d called for the %d. time", r, k, n)
					}
					busy.Add(1)
				})
				if n := busy.Swap(0); n != workers {
					t.Fatalf("run %d: %d calls, want %d", r, n, workers)
				}
			}
			got := func() (v any) {
				defer func() { v = recover() }()
				p.run(func(k int) {
					if k == workers-1 {
						panic("boom")
					}
				})
				return nil
			}()
			if got != "boom" {
				t.Fatalf("panic in a worker: the caller got %v", got)
			}
			ran := 0
			p.run(func(int) { busy.Add(1) })
			if ran = int(busy.Load()); ran != workers {
				t.Fatalf("after a panic: %d calls, want %d", ran, workers)
			}
		})
	}
}
