package modelcheck

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"reflect"
	"unsafe"
)

// hasher hashes worlds of type W. A world whose type is plain memory
// (integers, booleans and arrays and structs of them, without padding) is
// equal to another exactly when their bytes are, so its bytes are hashed
// directly, which is several times faster than maphash.Comparable; any
// other world goes through maphash.Comparable.
type hasher[W comparable] struct {
	plain bool
	words bool // plain and 16 bytes: two words
	seed  [4]uint64
	mseed maphash.Seed
}

func newHasher[W comparable]() hasher[W] {
	h := hasher[W]{plain: plainMemory(reflect.TypeFor[W]()), mseed: maphash.MakeSeed()}
	h.words = h.plain && reflect.TypeFor[W]().Size() == 16
	for i := range h.seed {
		// Odd seeds keep the multiplications below from collapsing to 0.
		h.seed[i] = maphash.Comparable(h.mseed, i) | 1
	}
	return h
}

// hash returns w's 64-bit hash. The common case, a world packed into 16
// bytes, is kept small enough to be inlined.
func (h *hasher[W]) hash(w *W) uint64 {
	if h.words {
		p := h.pair(w)
		return hashWords(&h.seed, p.lo, p.hi)
	}
	return h.hashOther(w)
}

// pair returns the two words of a world of two plain words.
func (h *hasher[W]) pair(w *W) pair {
	b := (*[16]byte)(unsafe.Pointer(w))
	return pair{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
}

// hashWords hashes the world whose words are lo and hi.
func hashWords(seed *[4]uint64, lo, hi uint64) uint64 {
	return mix(mix(lo^seed[0], hi^seed[1])^seed[2], seed[3]^16)
}

// hashOther hashes a world that is not two plain words.
func (h *hasher[W]) hashOther(w *W) uint64 {
	if !h.plain {
		return maphash.Comparable(h.mseed, *w)
	}
	return h.hashBytes(unsafe.Slice((*byte)(unsafe.Pointer(w)), unsafe.Sizeof(*w)))
}

// equal reports whether *a == *b. Go compares a 16-byte struct of bytes
// by calling the runtime; plain 16-byte worlds are compared here as two
// words instead.
func (h *hasher[W]) equal(a, b *W) bool {
	if h.words {
		x, y := (*[16]byte)(unsafe.Pointer(a)), (*[16]byte)(unsafe.Pointer(b))
		return binary.LittleEndian.Uint64(x[:8]) == binary.LittleEndian.Uint64(y[:8]) &&
			binary.LittleEndian.Uint64(x[8:]) == binary.LittleEndian.Uint64(y[8:])
	}
	return *a == *b
}

// hashBytes hashes b eight bytes at a time, the tail padded with zeros
// (worlds of one type all have the same length, so padding is unambiguous).
func (h *hasher[W]) hashBytes(b []byte) uint64 {
	acc := h.seed[2] ^ uint64(len(b))
	for ; len(b) >= 8; b = b[8:] {
		acc = mix(binary.LittleEndian.Uint64(b)^h.seed[0], acc^h.seed[1])
	}
	if len(b) > 0 {
		var tail [8]byte
		copy(tail[:], b)
		acc = mix(binary.LittleEndian.Uint64(tail[:])^h.seed[0], acc^h.seed[1])
	}
	return mix(acc^h.seed[2], h.seed[3])
}

// mix is the multiply-fold step of wyhash: the high and low halves of the
// 128-bit product, xored.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// plainMemory reports whether values of t are equal exactly when their
// bytes are: no pointers, strings, interfaces or floats (whose +0 and -0
// are equal, and NaN is not equal to itself), no padding, whose bytes are
// undefined, and no blank fields, which == ignores.
func plainMemory(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	case reflect.Array:
		return plainMemory(t.Elem())
	case reflect.Struct:
		var size uintptr
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Name == "_" || f.Offset != size || !plainMemory(f.Type) {
				return false
			}
			size += f.Type.Size()
		}
		return size == t.Size()
	}
	return false
}
