package worldmodel

// A LeaseWorld is two words, lo and hi: holder i's three bytes are bits
// 24i to 24i+23 of the 128-bit number hi:lo, so holder 2 straddles the two
// words, and the record's four bytes are hi's top half. Next builds the
// worlds it yields as words, and two words pass in registers: a world of
// bytes would go through memory, where a 16-byte copy of bytes just written
// as words stalls until they reach the cache.

// words returns w's two words.
func (w *LeaseWorld) words() (lo, hi uint64) { return w.lo, w.hi }

// leaseWorldOf returns the world whose words are lo and hi.
func leaseWorldOf(lo, hi uint64) LeaseWorld { return LeaseWorld{lo, hi} }

// holder returns holder i's three bytes as a word (see leaseHolder.word).
func (w *LeaseWorld) holder(i int) uint64 { return leaseHolderWord(w.lo, w.hi, i) }

// The record's four bytes.
func (w *LeaseWorld) rec() uint8   { return uint8(w.hi >> 32) }
func (w *LeaseWorld) fence() uint8 { return uint8(w.hi >> 40) }
func (w *LeaseWorld) ghost() uint8 { return uint8(w.hi >> 48) }
func (w *LeaseWorld) arg() uint8   { return uint8(w.hi >> 56) }

// leaseHolderShift holds, per holder, the shift of its bits within lo and
// the right and left shifts that place its bits within hi. A shift of 64
// or more yields 0: the holder has no bits in that word.
var leaseHolderShift = [LeaseMaxHolders][3]uint8{{0, 64, 0}, {24, 64, 0}, {48, 16, 0}, {72, 0, 8}}

// leaseSetHolder replaces holder i's bits in lo and hi with x, a holder
// word (see leaseHolder.word).
func leaseSetHolder(lo, hi uint64, i int, x uint64) (uint64, uint64) {
	s := &leaseHolderShift[i]
	const mask = 1<<24 - 1
	lo = lo&^(mask<<s[0]) | x<<s[0]
	hi = hi&^(mask>>s[1]<<s[2]) | x>>s[1]<<s[2]
	return lo, hi
}

// leaseHolderWord extracts holder i's word from lo and hi.
func leaseHolderWord(lo, hi uint64, i int) uint64 {
	s := &leaseHolderShift[i]
	const mask = 1<<24 - 1
	return (lo>>s[0] | hi>>s[2]<<s[1]) & mask
}
