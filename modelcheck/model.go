package modelcheck

import (
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
type Options struct {
	// MaxStates stops the search, Incomplete, after this many distinct
	// worlds; 0 means no limit.
	MaxStates int
	// Timeout stops the search, Incomplete, after this long; 0 means none.
	Timeout time.Duration
	// Fingerprint keeps a 64-bit hash of each world instead of the world.
	Fingerprint bool
	// Progress, if set, receives a line every ProgressEvery (default 5 s)
	// with the states, states per second and depth so far.
	Progress      io.Writer
	ProgressEvery time.Duration
}
