package modelcheck

// pairSet is the exact visited set for worlds that are two plain words
// (see hasher.words): a slot is the world itself, 16 bytes, so four share
// a cache line and none straddles two, where worldSet's tagged slots take
// 20. The all-zero world marks empty slots and is kept aside.
type pairSet struct {
	slots []pair
	shift uint // 64 - log2(len(slots)): a hash's home slot is h >> shift
	count int
	limit int  // count beyond which the table grows
	zero  bool // the all-zero world is in the set
	seed  [4]uint64
	free  func()   // the table's release (see table); nil when the collector frees it
	_     [64]byte // keeps the sets of the parallel search's shards, written at every new world, off each other's cache lines
}

// pair is a world as its two little-endian words.
type pair struct{ lo, hi uint64 }

func newPairSet(seed [4]uint64) *pairSet {
	t := &pairSet{seed: seed}
	t.alloc(setInitialLog)
	return t
}

// alloc makes a new, empty table of 2^log slots, and returns the old
// one's release, to call once it is copied (see table).
func (t *pairSet) alloc(log uint) (release func()) {
	release = t.free
	t.slots, t.free = table[pair](1 << log)
	t.shift = 64 - log
	t.limit = len(t.slots) * setLoadNum / setLoadDen
	return release
}

// hash is hasher.hash of the world p.
func (t *pairSet) hash(p pair) uint64 { return hashWords(&t.seed, p.lo, p.hi) }

// touch reads the home slot of a world whose hash is h and the slot after
// it, which is in the next cache line a quarter of the time.
func (t *pairSet) touch(h uint64) uint32 {
	i := h >> t.shift
	return uint32(t.slots[i].lo) + uint32(t.slots[min(i+1, uint64(len(t.slots)-1))].lo)
}

// add inserts p, whose hash is h, and reports whether it was new.
func (t *pairSet) add(p pair, h uint64) bool {
	if p == (pair{}) {
		had := t.zero
		t.zero = true
		return !had
	}
	mask := uint64(len(t.slots) - 1)
	for i := h >> t.shift; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if *s == p {
			return false
		}
		if *s == (pair{}) {
			*s = p
			t.count++
			if t.count > t.limit {
				t.grow()
			}
			return true
		}
	}
}

// grow doubles the table. The old one is in hash order, so the new one is
// written nearly sequentially.
func (t *pairSet) grow() {
	old := t.slots
	release := t.alloc(64 - t.shift + 1)
	mask := uint64(len(t.slots) - 1)
	for _, p := range old {
		if p == (pair{}) {
			continue
		}
		i := t.hash(p) >> t.shift
		for t.slots[i] != (pair{}) {
			i = (i + 1) & mask
		}
		t.slots[i] = p
	}
	freeTable(release)
}

// release frees the table, if table mapped it; the set is not used after.
// A nil set has nothing to free.
func (t *pairSet) release() {
	if t == nil {
		return
	}
	freeTable(t.free)
	t.slots, t.free = nil, nil
}
