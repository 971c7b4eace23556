package worldmodel

import (
	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/policy"
)

// The key function. A LeaseWorld is four words, read as one 256-bit
// number: holder i's leaseHolderBits bits start at bit leaseHolderBits×i,
// the first key's record and the fault at bit 160, and the second key's
// record at bit 192. Within a holder, and within a record, the fields
// follow one another in the order of the lists below, each in its own
// width: a new field is one more line in a list, and no layout is written
// by hand.
const (
	leaseHolderBits = 40
	leaseRecordAt   = leaseHolderBits * LeaseMaxHolders
	leaseRecordBits = 32
	leaseRecord2At  = leaseRecordAt + leaseRecordBits
	leaseRecord2    = 16
)

// get returns the n bits of w at bit off.
func (w *LeaseWorld) get(off, n uint) uint64 {
	i, s := off/64, off%64
	v := w.w[i] >> s
	if s+n > 64 {
		v |= w.w[i+1] << (64 - s)
	}
	return v & (1<<n - 1)
}

// set replaces the n bits of w at bit off with v.
func (w *LeaseWorld) set(off, n uint, v uint64) {
	i, s := off/64, off%64
	mask := uint64(1)<<n - 1
	w.w[i] = w.w[i]&^(mask<<s) | v<<s
	if s+n > 64 {
		r := 64 - s
		w.w[i+1] = w.w[i+1]&^(mask>>r) | v>>r
	}
}

// holder returns holder i's bits (see leaseHolder.word).
func (w *LeaseWorld) holder(i int) uint64 { return w.get(uint(i)*leaseHolderBits, leaseHolderBits) }

func (w *LeaseWorld) setHolder(i int, x uint64) { w.set(uint(i)*leaseHolderBits, leaseHolderBits, x) }

// setRecords packs v's records and fault into w.
func (w *LeaseWorld) setRecords(v *leaseVars) {
	w.set(leaseRecordAt, leaseRecordBits, v.recordWord())
	w.set(leaseRecord2At, leaseRecord2, v.rec[1].word())
}

// fault returns the fault the move into w recorded.
func (w LeaseWorld) fault() leaseFault { return leaseFault(w.get(leaseRecordAt+leaseRecordWidth, 4)) }

// fields packs and unpacks a sequence of small fields in one word.
type fields struct {
	x   uint64
	off uint
}

func (f *fields) put(v uint64, n uint) {
	f.x |= (v & (1<<n - 1)) << f.off
	f.off += n
}

func (f *fields) take(n uint) uint64 {
	v := f.x >> f.off & (1<<n - 1)
	f.off += n
	return v
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// word packs h: the handle's bookkeeping that outlives a move, its
// RunFenced call, its manager's note and its flags.
func (h *leaseHolder) word() uint64 {
	var f fields
	hs := &h.hs
	w := hs.Write
	if hs.Call == leasestep.CallNone {
		w = leasestep.Write{} // the write of a call answered no longer matters
	}
	f.put(uint64(hs.State), 5)
	f.put(uint64(hs.Life), 2)
	f.put(uint64(hs.Call), 3)
	f.put(b2u(hs.Closing), 1)
	f.put(b2u(hs.Lost), 1)
	f.put(uint64(hs.Token), 4)
	f.put(uint64(w.Generation), 4)
	f.put(b2u(w.Released), 1)
	f.put(uint64(w.Expected), 2)
	f.put(uint64(hs.Wrote), 2)
	f.put(uint64(h.fcall), 2)
	f.put(uint64(h.note), 2)
	f.put(uint64(h.flags), leaseFlagCount)
	return f.x
}

// leaseUnpackHolderWord inverts leaseHolder.word; the handle's instants
// are all of an earlier move.
func leaseUnpackHolderWord(x uint64) leaseHolder {
	f := fields{x: x}
	var h leaseHolder
	hs := &h.hs
	hs.State = policy.StateID(f.take(5))
	hs.Life = leasestep.Life(f.take(2))
	hs.Call = leasestep.Call(f.take(3))
	hs.Closing = f.take(1) != 0
	hs.Lost = f.take(1) != 0
	hs.Token = store.Token(f.take(4))
	hs.Write.Generation = store.Token(f.take(4))
	hs.Write.Released = f.take(1) != 0
	hs.Write.Expected = store.Revision(f.take(2))
	hs.Wrote = store.Revision(f.take(2))
	h.fcall = uint8(f.take(2))
	h.note = uint8(f.take(2))
	h.flags = leaseFlags(f.take(leaseFlagCount))
	hs.CallStart, hs.WriteStart = leaseMomentPast, leaseMomentPast
	return h
}

// recordWord packs the first key's record and the fault.
func (v *leaseVars) recordWord() uint64 {
	f := fields{x: v.rec[0].word(), off: leaseRecordWidth}
	f.put(uint64(v.fault), 4) // at bit leaseRecordWidth: see fault
	f.put(uint64(v.faultAt), 3)
	f.put(uint64(v.faultArg), 7)
	return f.x
}

func (v *leaseVars) unpackRecord(x uint64) {
	v.rec[0] = leaseUnpackRecordWord(x)
	f := fields{x: x, off: leaseRecordWidth}
	v.fault = leaseFault(f.take(4))
	v.faultAt = uint8(f.take(3))
	v.faultArg = uint8(f.take(7))
}

// leaseRecordWidth is the bits of one record.
const leaseRecordWidth = 15

// word packs r in leaseRecordWidth bits.
func (r *leaseRecord) word() uint64 {
	var f fields
	f.put(uint64(r.gen), 4)
	f.put(uint64(r.free), 1)
	f.put(uint64(r.by), 3)
	f.put(uint64(r.fence), 3)
	f.put(uint64(r.top), 4)
	return f.x
}

func leaseUnpackRecordWord(x uint64) leaseRecord {
	f := fields{x: x}
	return leaseRecord{gen: uint8(f.take(4)), free: uint8(f.take(1)), by: uint8(f.take(3)), fence: uint8(f.take(3)), top: uint8(f.take(4))}
}

// pack packs v into a LeaseWorld; unpack inverts it.
func (v *leaseVars) pack() LeaseWorld {
	var w LeaseWorld
	for i := range v.h {
		w.setHolder(i, v.h[i].word())
	}
	w.setRecords(v)
	return w
}

func (w LeaseWorld) unpack() leaseVars {
	var v leaseVars
	for i := range v.h {
		v.h[i] = leaseUnpackHolderWord(w.holder(i))
	}
	v.unpackRecord(w.get(leaseRecordAt, leaseRecordBits))
	v.rec[1] = leaseUnpackRecordWord(w.get(leaseRecord2At, leaseRecord2))
	return v
}
