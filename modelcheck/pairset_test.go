package modelcheck

import (
	"runtime"
	"testing"
)

func TestPairSetAddsEachWorldOnceAcrossGrowth(t *testing.T) {
	// The table grows from 1<<10 slots many times, and on linux past
	// hugeTableBytes, into tables mapped outside the Go heap.
	const n = 1_000_000
	mapped := mappedBytes.Load()
	hs := newHasher[[16]byte]()
	if !hs.words {
		t.Fatal("a [16]byte world is not two plain words")
	}
	set := newPairSet(hs.seed)
	for round, want := range []bool{true, false} {
		// World 0 is all zeros except byte 7; the all-zero world, which
		// marks empty slots, comes first.
		var zero [16]byte
		if got := set.add(hs.pair(&zero), hs.hash(&zero)); got != want {
			t.Fatalf("round %d: add(zero world) = %v, want %v", round, got, want)
		}
		for i := range n {
			w := world(i)
			if got := set.add(hs.pair(&w), hs.hash(&w)); got != want {
				t.Fatalf("round %d: add(world %d) = %v, want %v", round, i, got, want)
			}
		}
	}
	if set.count != n || set.count > set.limit || set.limit >= len(set.slots) {
		t.Fatalf("count %d, limit %d, slots %d", set.count, set.limit, len(set.slots))
	}
	if runtime.GOOS == "linux" && mappedBytes.Load() == mapped {
		t.Error("no table was mapped outside the Go heap")
	}
}

// Worlds whose hashes are equal are still told apart, and probing wraps
// around the end of the table.
func TestPairSetSameHashDifferentWorlds(t *testing.T) {
	hs := newHasher[[16]byte]()
	set := newPairSet(hs.seed)
	a, b := world(1), world(2)
	const h = ^uint64(0) // the last slot
	for k, c := range []struct {
		w    *[16]byte
		want bool
	}{{&a, true}, {&b, true}, {&a, false}, {&b, false}} {
		if got := set.add(hs.pair(c.w), h); got != c.want {
			t.Fatalf("add %d = %v, want %v", k, got, c.want)
		}
	}
	if set.slots[0] != hs.pair(&b) {
		t.Fatalf("slot 0 holds %v, want world 2 wrapped around", set.slots[0])
	}
}

// The words hash like the world they come from, which growing relies on.
func TestPairSetHashIsHasherHash(t *testing.T) {
	hs := newHasher[[16]byte]()
	set := newPairSet(hs.seed)
	for i := range 1000 {
		w := world(i)
		if got, want := set.hash(hs.pair(&w)), hs.hash(&w); got != want {
			t.Fatalf("world %d: pair hash %x, hasher hash %x", i, got, want)
		}
	}
}
