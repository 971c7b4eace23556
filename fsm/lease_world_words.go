package fsm

import (
	"encoding/binary"
	"unsafe"
)

// A LeaseWorld's 16 bytes are also two little-endian words, lo (bytes 0
// to 7) and hi (8 to 15): holder i's three bytes are bits 24i to 24i+23 of
// the 128-bit number hi:lo, so holder 2 straddles the two words, and the
// record's four bytes are hi's top half. Next builds the worlds it yields
// as words, because the checker reads them as words: a word read of bytes
// just written one at a time stalls until they reach the cache.

// words returns w's two words.
func (w *LeaseWorld) words() (lo, hi uint64) {
	b := (*[16]byte)(unsafe.Pointer(w))
	return binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])
}

// leaseWorldOf returns the world whose words are lo and hi.
func leaseWorldOf(lo, hi uint64) LeaseWorld {
	var w LeaseWorld
	b := (*[16]byte)(unsafe.Pointer(&w))
	binary.LittleEndian.PutUint64(b[:8], lo)
	binary.LittleEndian.PutUint64(b[8:], hi)
	return w
}

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
