package modelcheck

import (
	"fmt"
	"io"
	"time"
)

// Model is what the checker explores.
type Model[W comparable] struct {
	// Name labels reports.
	Name string
	// Init lists the initial worlds.
	Init []W
	// Next yields each move of w: a short label and the world after it.
	// It must be deterministic (see the package doc).
	Next func(w W, yield func(label string, next W))
	// Fork, if set, returns a Next for one worker of a parallel search
	// (Options.Workers > 1), which yields what Next yields: for a model
	// whose Next works in scratch state of its own. Without Fork, Next
	// must be safe for concurrent use when Workers > 1. A search of one
	// worker calls Next itself, so searches of one such model must not
	// run at once: build a model for each.
	Fork func() func(w W, yield func(label string, next W))
	// Invariants must hold in every reachable world.
	Invariants []Invariant[W]
	// Moves must hold of every move.
	Moves []MoveInvariant[W]
	// Owes, if set, describes work a world still owes, or returns "" when
	// it owes none; a world without moves that owes work is a violation.
	Owes func(w W) string
	// Canonical, if set, maps a world to the representative of its
	// symmetry class, so that symmetric worlds are visited once.
	Canonical func(w W) W
	// Format, if set, renders a world in counterexamples; %+v otherwise.
	Format func(w W) string
}

// Invariant is a named property of every reachable world. Check returns
// nil when it holds, or an error saying how it fails.
type Invariant[W comparable] struct {
	Name  string
	Check func(w W) error
}

// MoveInvariant is a named property of every move from one world to the
// next, such as "the generation never decreases".
type MoveInvariant[W comparable] struct {
	Name  string
	Check func(from W, label string, to W) error
}

// Options bound a search. The zero value explores without limits, keeps
// whole worlds and prints no progress.
//
// MaxStates, Timeout and ProgressEvery must not be negative: Check panics
// at once, naming the field, when one is, as a negative limit is a
// mistake of the program rather than a bound (as time.NewTicker panics on
// a non-positive interval).
type Options struct {
	// MaxStates stops the search, Incomplete, after this many distinct
	// worlds; 0 means no limit. Negative panics.
	MaxStates int
	// Timeout stops the search, Incomplete, after this long; 0 means none.
	// Negative panics.
	Timeout time.Duration
	// Fingerprint keeps a 64-bit hash of each world instead of the world.
	Fingerprint bool
	// Progress, if set, receives a line every ProgressEvery (0: the
	// default, 5 s; negative panics) with the states, states per second
	// and depth so far.
	Progress      io.Writer
	ProgressEvery time.Duration
	// Workers is how many goroutines explore at once; 0 and 1 mean one.
	// More find the same states, moves, depth, verdict and trace as one
	// (see parallel.go), sooner on as many cores. Negative panics.
	Workers int
}

// validate panics, naming the field, when a limit of o is negative.
func (o Options) validate() {
	switch {
	case o.MaxStates < 0:
		panic(fmt.Sprintf("modelcheck: Options.MaxStates is %d; want 0 (no limit) or more", o.MaxStates))
	case o.Timeout < 0:
		panic(fmt.Sprintf("modelcheck: Options.Timeout is %v; want 0 (none) or more", o.Timeout))
	case o.Workers < 0:
		panic(fmt.Sprintf("modelcheck: Options.Workers is %d; want 0 (one) or more", o.Workers))
	case o.ProgressEvery < 0:
		panic(fmt.Sprintf("modelcheck: Options.ProgressEvery is %v; want 0 (the default, 5s) or more", o.ProgressEvery))
	}
}
