package modelcheck

// The visited sets are open-addressing hash tables with linear probing,
// in place of Go maps: a probe of a table too large for the caches is a
// cache miss whatever the table, so what matters is one miss per probe
// (the world sits in its slot, next to a tag that rules out almost every
// other world before they are compared) and being able to touch a batch
// of slots ahead of the probes (see search.prefetch), so that their
// misses overlap. A world's home slot is its hash's top bits, which keeps
// the table sorted by hash: growing it then writes the new table in
// order instead of at random.

const (
	// setInitialLog is the log2 of a new table's slots.
	setInitialLog = 10
	// A table grows when more than setLoadNum/setLoadDen of its slots are
	// full: linear probing stays short up to about that.
	setLoadNum, setLoadDen = 3, 4
)

// worldSet is the exact visited set: it keeps whole worlds.
type worldSet[W comparable] struct {
	slots []worldSlot[W]
	shift uint // 64 - log2(len(slots)): a hash's home slot is h >> shift
	count int
	limit int      // count beyond which the table grows
	_     [64]byte // see pairSet
}

type worldSlot[W comparable] struct {
	tag uint32 // the hash's low 32 bits, made odd; 0 marks an empty slot
	w   W
}

func newWorldSet[W comparable]() *worldSet[W] {
	t := &worldSet[W]{}
	t.alloc(setInitialLog)
	return t
}

func (t *worldSet[W]) alloc(log uint) {
	t.slots = make([]worldSlot[W], 1<<log)
	t.shift = 64 - log
	t.limit = len(t.slots) * setLoadNum / setLoadDen
}

// touch reads the home slot of a world whose hash is h, and the slot two
// further on, which is in the next cache line when the probe runs into
// it, so that the probe that follows finds them in the cache.
func (t *worldSet[W]) touch(h uint64) uint32 {
	i := h >> t.shift
	return t.slots[i].tag + t.slots[min(i+2, uint64(len(t.slots)-1))].tag
}

// add inserts w, whose hash is h, and reports whether it was new. hs
// rehashes the worlds when the table grows.
func (t *worldSet[W]) add(w *W, h uint64, hs *hasher[W]) bool {
	tag := uint32(h) | 1
	mask := uint64(len(t.slots) - 1)
	for i := h >> t.shift; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.tag == 0 {
			s.tag, s.w = tag, *w
			t.count++
			if t.count > t.limit {
				t.grow(hs)
			}
			return true
		}
		if s.tag == tag && hs.equal(&s.w, w) {
			return false
		}
	}
}

// grow doubles the table. The old one is in hash order, so the new one is
// written nearly sequentially.
func (t *worldSet[W]) grow(hs *hasher[W]) {
	old := t.slots
	t.alloc(64 - t.shift + 1)
	mask := uint64(len(t.slots) - 1)
	for k := range old {
		s := &old[k]
		if s.tag == 0 {
			continue
		}
		i := hs.hash(&s.w) >> t.shift
		for t.slots[i].tag != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = *s
	}
}

// printSet is the fingerprint visited set: it keeps 64-bit hashes only.
type printSet struct {
	slots []uint64 // 0 marks an empty slot
	shift uint
	count int
	limit int
	free  func()   // the table's release (see table); nil when the collector frees it
	_     [64]byte // see pairSet
}

func newPrintSet() *printSet {
	t := &printSet{}
	t.alloc(setInitialLog)
	return t
}

// alloc makes a new, empty table of 2^log slots, and returns the old
// one's release, to call once it is copied (see table).
func (t *printSet) alloc(log uint) (release func()) {
	release = t.free
	t.slots, t.free = table[uint64](1 << log)
	t.shift = 64 - log
	t.limit = len(t.slots) * setLoadNum / setLoadDen
	return release
}

func (t *printSet) touch(h uint64) uint32 { return uint32(t.slots[h>>t.shift]) }

// add inserts the fingerprint h and reports whether it was new.
func (t *printSet) add(h uint64) bool {
	if h == 0 {
		h = 1 // 0 marks empty slots; 1 stands for it
	}
	mask := uint64(len(t.slots) - 1)
	for i := h >> t.shift; ; i = (i + 1) & mask {
		switch t.slots[i] {
		case 0:
			t.slots[i] = h
			t.count++
			if t.count > t.limit {
				t.grow()
			}
			return true
		case h:
			return false
		}
	}
}

func (t *printSet) grow() {
	old := t.slots
	release := t.alloc(64 - t.shift + 1)
	mask := uint64(len(t.slots) - 1)
	for _, h := range old {
		if h == 0 {
			continue
		}
		i := h >> t.shift
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = h
	}
	freeTable(release)
}

// release frees the table, if table mapped it; the set is not used after.
// A nil set has nothing to free.
func (t *printSet) release() {
	if t == nil {
		return
	}
	freeTable(t.free)
	t.slots, t.free = nil, nil
}
