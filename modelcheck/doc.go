// Package modelcheck is a small explicit-state model checker: it visits
// every world a model can reach, breadth first, checks invariants on each
// new world and on each move, and reports the shortest counterexample.
//
// A model is a set of initial worlds and a successor function. Worlds are
// comparable Go values (structs of small integers and fixed arrays), kept
// whole in the visited set, an open-addressing hash table (set.go) with a
// small cache of recently reached worlds in front of it (recent.go); for
// spaces too large to keep whole, the Fingerprint option keeps a 64-bit
// hash of each world instead, at the price of a tiny chance of missing a
// world whose hash collides.
//
// The search keeps, for each visited world, its parent and the ordinal of
// the move that reached it, and rebuilds a counterexample by replaying
// those moves from the initial world; so the successor function must be
// deterministic: the same world yields the same moves in the same order.
//
// With Options.Workers above one, the search expands each level in
// parallel and probes a visited set split into shards by hash, each shard
// in the order the sequential search would probe it (parallel.go): it
// finds the same states, moves, depth, verdict and trace. Its workers
// live for the search and wait between phases by spinning a while before
// they park (pool.go).
//
// On linux a visited-set table of 8 MiB or more is mapped outside the Go
// heap with transparent huge pages asked for (table_linux.go): a probe of
// a table far larger than the caches would otherwise miss the TLB as
// well. The table is freed when it grows and when Check returns; such
// memory is not counted by runtime.MemStats or limited by GOMEMLIMIT.
//
// A search that stops at a limit (states or time) says Incomplete, never
// Passed. A world that has no moves but still owes work (the model's Owes
// says what) is a violation, as is a broken invariant.
//
// The caller's duties:
//
//  1. Next yields every move of a world, in a deterministic order, and
//     neither keeps nor mutates the world it is given.
//  2. Worlds hold no pointers, slices or maps whose identity matters:
//     equal worlds must be equal values.
//  3. Canonical, if set, maps every world to one representative of its
//     symmetry class, and commutes with Next up to that symmetry.
//  4. Invariants, move invariants and Owes are pure functions of the
//     world (and the move). Move invariants and Canonical run inside
//     Next's yield, so they share no scratch state with Next.
//  5. With Workers above one, Next, Canonical, the invariants and Owes
//     are called from several goroutines at once: they are safe for
//     concurrent use, or the model sets Fork to give each worker a Next
//     of its own.
package modelcheck
