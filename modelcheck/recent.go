package modelcheck

import "unsafe"

// recentBytes is about the size of the recent set: small enough to stay in
// a core's own cache.
const recentBytes = 256 << 10

// recentSet holds some worlds that are in the visited set, or are about to
// be: a direct-mapped cache in front of it, indexed by the hash's low bits
// (the visited set places worlds by the top bits). Interleaved moves
// commute, so a world is often reached again soon after it was first
// reached, and most moves find their world here instead of in a table far
// larger than the caches. A world found here is not new, so a move that
// finds its world skips the probe without changing what the search finds.
type recentSet[W comparable] struct {
	slots []W
	mask  uint64
}

// newRecentSet returns a recent set all of whose slots hold w, a visited
// world (an empty slot would hold the zero world, which may not be).
func newRecentSet[W comparable](w W) recentSet[W] {
	n, size := 1, max(int(unsafe.Sizeof(w)), 1) // worlds of size 0 take a slot all the same
	for n*2*size <= recentBytes {
		n *= 2
	}
	r := recentSet[W]{slots: make([]W, n), mask: uint64(n - 1)}
	for i := range r.slots {
		r.slots[i] = w
	}
	return r
}

// has reports whether w, whose hash is h, is in the set, and if not, puts
// it in, in place of the world in its slot: the caller is about to probe
// it.
func (r *recentSet[W]) has(w *W, h uint64, hs *hasher[W]) bool {
	s := &r.slots[h&r.mask]
	if hs.equal(s, w) {
		return true
	}
	*s = *w
	return false
}
