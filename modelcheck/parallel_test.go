package modelcheck_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/rivus/collab/modelcheck"
)

// randomModel is a random graph of n worlds of two words, with random
// moves (some back to the world itself), a random canonical form that
// merges worlds of equal residue, random world and move invariants and
// owed work, all deterministic functions of the seed.
func randomModel(seed uint64, n int) modelcheck.Model[[2]uint64] {
	rng := rand.New(rand.NewPCG(seed, 7))
	succ := make([][]uint64, n)
	for i := range succ {
		for range rng.IntN(6) {
			succ[i] = append(succ[i], uint64(rng.IntN(n)))
		}
	}
	m := modelcheck.Model[[2]uint64]{
		Name: "random",
		Init: [][2]uint64{{0, 1}, {uint64(rng.IntN(n)), 1}},
		Next: func(w [2]uint64, yield func(string, [2]uint64)) {
			for k, to := range succ[w[0]] {
				yield(fmt.Sprintf("m%d", k), [2]uint64{to, 1})
			}
		},
	}
	if rng.IntN(3) == 0 {
		mod := uint64(n/3 + 1)
		m.Canonical = func(w [2]uint64) [2]uint64 { return [2]uint64{w[0] % mod, 1} }
	}
	if rng.IntN(2) == 0 {
		bad := uint64(rng.IntN(n))
		m.Invariants = []modelcheck.Invariant[[2]uint64]{{Name: "not bad", Check: func(w [2]uint64) error {
			if w[0] == bad {
				return errors.New("bad world")
			}
			return nil
		}}}
	}
	if rng.IntN(3) == 0 {
		from, to := uint64(rng.IntN(n)), uint64(rng.IntN(n))
		m.Moves = []modelcheck.MoveInvariant[[2]uint64]{{Name: "no bad move", Check: func(f [2]uint64, _ string, t [2]uint64) error {
			if f[0] == from && t[0] == to {
				return errors.New("bad move")
			}
			return nil
		}}}
	}
	if rng.IntN(3) == 0 {
		debtor := uint64(rng.IntN(n))
		m.Owes = func(w [2]uint64) string {
			if w[0] == debtor {
				return "a debt"
			}
			return ""
		}
	}
	return m
}

// TestParallelMatchesSequential: the parallel search finds what the
// sequential one finds, field by field, trace included, on random models
// with and without limits, fingerprints and symmetry.
func TestParallelMatchesSequential(t *testing.T) {
	for seed := range uint64(300) {
		n := 20 + int(seed%50)*4
		if seed%50 == 0 { // levels wider than the default batch
			n = 50_000
		}
		m := randomModel(seed, n)
		opts := modelcheck.Options{Fingerprint: seed%4 == 1}
		if seed%3 == 2 {
			opts.MaxStates = 1 + int(seed%int64OrSmall(n))
		}
		want := modelcheck.Check(m, opts)
		for _, workers := range []int{2, 3, 8} {
			o := opts
			o.Workers = workers
			restore := func() {}
			if seed%2 == 1 { // many batches a level
				restore = modelcheck.SetParallelBatch(int(1 + seed%40))
			}
			got := modelcheck.Check(m, o)
			restore()
			got.Elapsed, want.Elapsed = 0, 0
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, %d worlds, workers %d:\n got %s %+v\nwant %s %+v", seed, n, workers, got.Summary(), got.Violation, want.Summary(), want.Violation)
			}
		}
	}
}

func int64OrSmall(n int) uint64 { return uint64(max(n/2, 1)) }

// TestParallelPanicReachesTheCaller: a panic in a worker's Next is raised
// in Check's caller, as the sequential search raises it.
func TestParallelPanicReachesTheCaller(t *testing.T) {
	m := torus(23, nil)
	next := m.Next
	m.Next = func(w [3]uint8, yield func(string, [3]uint8)) {
		if w == [3]uint8{11, 11, 12} { // in the widest levels, off the caller's run
			panic("model bug")
		}
		next(w, yield)
	}
	defer func() {
		if v := recover(); v != "model bug" {
			t.Fatalf("recovered %v, want the model's panic", v)
		}
	}()
	modelcheck.Check(m, modelcheck.Options{Workers: 8})
	t.Fatal("Check returned")
}
