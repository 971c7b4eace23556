package modelcheck

import (
	"reflect"
	"testing"
)

func world(i int) [16]byte {
	var w [16]byte
	w[0], w[1], w[2], w[7], w[15] = byte(i), byte(i>>8), byte(i>>16), 7, byte(i>>24)
	return w
}

func TestWorldSetAddsEachWorldOnceAcrossGrowth(t *testing.T) {
	const n = 100_000 // the table grows from 1<<10 slots several times
	hs := newHasher[[16]byte]()
	set := newWorldSet[[16]byte]()
	for round, want := range []bool{true, false} {
		for i := range n {
			w := world(i)
			if got := set.add(&w, hs.hash(&w), &hs); got != want {
				t.Fatalf("round %d: add(world %d) = %v, want %v", round, i, got, want)
			}
		}
	}
	if set.count != n || set.count > set.limit || set.limit >= len(set.slots) {
		t.Fatalf("count %d, limit %d, slots %d", set.count, set.limit, len(set.slots))
	}
}

// Worlds whose hashes are equal are still told apart by comparing them.
func TestWorldSetSameHashDifferentWorlds(t *testing.T) {
	hs := newHasher[[16]byte]()
	set := newWorldSet[[16]byte]()
	a, b := world(1), world(2)
	const h = 0xdead_beef_0000_0001 // the last slot: probing wraps around
	for _, c := range []struct {
		w    *[16]byte
		want bool
	}{{&a, true}, {&b, true}, {&a, false}, {&b, false}} {
		if got := set.add(c.w, h, &hs); got != c.want {
			t.Fatalf("add(%v) = %v, want %v", *c.w, got, c.want)
		}
	}
}

func TestPrintSetAddsEachHashOnce(t *testing.T) {
	set := newPrintSet()
	for round, want := range []bool{true, false} {
		for i := range uint64(100_000) {
			h := i * 0x9e37_79b9_7f4a_7c15 // i = 0 gives the hash 0, which marks empty slots
			if got := set.add(h); got != want {
				t.Fatalf("round %d: add(%#x) = %v, want %v", round, h, got, want)
			}
		}
	}
	if set.count != 100_000 {
		t.Fatalf("count %d", set.count)
	}
}

func TestPlainMemory(t *testing.T) {
	// Exported fields: reflection is what reads them.
	type (
		packed struct{ A, B uint8 }
		padded struct {
			A uint8
			B uint32
		}
		tailPad struct {
			A uint32
			B uint8
		}
		blank  struct{ _, A uint8 }
		nested struct {
			P    [2]packed
			N    [3]int16
			B, C bool
		}
		withStr   struct{ S string }
		withFloat struct{ F float64 }
	)
	for _, c := range []struct {
		v    any
		want bool
	}{
		{0, true}, {uint8(0), true}, {true, true}, {[4][3]uint8{}, true}, {packed{}, true}, {nested{}, true},
		{padded{}, false}, {tailPad{}, false}, {blank{}, false}, {"", false}, {0.0, false},
		{withStr{}, false}, {withFloat{}, false}, {[2]float32{}, false}, {new(int), false}, {any(nil), false},
	} {
		typ := reflect.TypeOf(c.v)
		if typ == nil {
			typ = reflect.TypeFor[any]()
		}
		if got := plainMemory(typ); got != c.want {
			t.Errorf("plainMemory(%v) = %v, want %v", typ, got, c.want)
		}
	}
}

// The hasher agrees with == on plain worlds of several sizes and on worlds
// it hashes through maphash.
func TestHasherAgreesWithEquality(t *testing.T) {
	type odd struct{ a, b, c uint8 }   // 3 bytes: hashed with a padded tail
	type wide struct{ a, b, c uint64 } // 24 bytes: three words
	type named struct {
		s string
		n int
	} // not plain
	checkHasher(t, []odd{{1, 2, 3}, {1, 2, 3}, {3, 2, 1}, {}})
	checkHasher(t, []wide{{1, 2, 3}, {1, 2, 3}, {1, 2, 4}, {}})
	checkHasher(t, [][16]byte{world(5), world(5), world(6)})
	checkHasher(t, []named{{"a", 1}, {"a", 1}, {"b", 1}, {"a", 2}})
}

func checkHasher[W comparable](t *testing.T, ws []W) {
	t.Helper()
	hs := newHasher[W]()
	for i := range ws {
		for j := range ws {
			eq := ws[i] == ws[j]
			if got := hs.equal(&ws[i], &ws[j]); got != eq {
				t.Errorf("%T: equal(%v, %v) = %v, want %v", ws[i], ws[i], ws[j], got, eq)
			}
			if sameHash := hs.hash(&ws[i]) == hs.hash(&ws[j]); sameHash != eq {
				t.Errorf("%T: hashes of %v and %v equal: %v, want %v", ws[i], ws[i], ws[j], sameHash, eq)
			}
		}
	}
}
