package worldmodel

import (
	"strconv"
	"strings"
)

// format renders w for traces: the record and fence, then one line per
// holder.
func (m *leaseModel) format(pw LeaseWorld) string {
	w := pw.unpack()
	var b strings.Builder
	b.WriteString(leaseRecordText(&w))
	if w.fence != 0 {
		b.WriteString("; fence held by " + leaseHolderName(int(w.fence)-1))
	}
	for i := range m.n {
		b.WriteString("\n     ")
		m.formatHolder(&b, &w, i)
	}
	return b.String()
}

func leaseRecordText(w *leaseVars) string {
	if w.recBy == 0 {
		return "no record"
	}
	s := "record g" + strconv.Itoa(int(w.recGen)) + " by " + leaseHolderName(int(w.recBy)-1)
	if w.recFree != 0 {
		s += " (tombstone)"
	}
	return s
}

var leaseLifeNames = [...]string{"", "acquiring", "returned", "ended"}

var leaseFenceCallNames = [...]string{"", "RunFenced waits", "fenced work runs", "RunFenced holds the fence"}

var leaseFlagNames = [...]string{"lost", "loaded revision current", "written revision current", "renewal armed",
	"deadline armed", "deadline passed", "clock lags", "saw revision", "TTL passed", "Close called", "crashed"}

func (m *leaseModel) formatHolder(b *strings.Builder, w *leaseVars, i int) {
	h := &w.h[i]
	b.WriteString(leaseHolderName(i) + " " + m.stateName(h.st))
	if h.life != leaseLifeNone {
		b.WriteString(" g" + strconv.Itoa(int(h.gen)) + ", " + leaseLifeNames[h.life])
	}
	if h.op != leaseOpNone {
		b.WriteString(", " + leaseOpNames[h.op] + " in flight")
	}
	if c := h.fcall; c != leaseFenceIdle {
		b.WriteString(", " + leaseFenceCallNames[c])
	}
	for bit, name := range leaseFlagNames {
		if h.flags&(1<<bit) != 0 {
			b.WriteString(", " + name)
		}
	}
}

func (m *leaseModel) stateName(s uint8) string {
	if int(s) < len(m.states) {
		return m.states[s].Name
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Packing. A holder's life and RunFenced call share four bits (lifeCall:
// life × call, with "Close called" as a life of its own, and 15 for a
// crashed process); its deadline and observer flags share four more
// (clock: none, armed, armed+due, armed+lag, armed+due+lag × none, seen,
// seen+ttl). Both code only what the model can reach: due and lag only
// while armed, ttl only when seen, Close called only while returned, and
// no RunFenced call holding the fence between moves.
const (
	leaseLifeCallCrashed = 15
	leaseLowFlags        = leaseLostF | leaseLFresh | leaseWFresh | leaseRenew
)

// leaseLifeOfCode maps a lifeCall's life code to the life.
var leaseLifeOfCode = [...]uint8{leaseLifeNone, leaseLifeAcquiring, leaseLifeReturned, leaseLifeReturned, leaseLifeEnded}

// leaseDeadlineOfCode maps a clock's deadline code to its flags.
var leaseDeadlineOfCode = [...]leaseFlags{0, leaseArmed, leaseArmed | leaseDue, leaseArmed | leaseLag, leaseArmed | leaseDue | leaseLag}

// leaseObserverOfCode maps a clock's observer code to its flags.
var leaseObserverOfCode = [...]leaseFlags{0, leaseSeen, leaseSeen | leaseTTL}

// pack packs v into a LeaseWorld; unpack inverts it.
func (v *leaseVars) pack() LeaseWorld {
	var lo, hi uint64
	for i := range v.h {
		lo, hi = leaseSetHolder(lo, hi, i, v.h[i].word())
	}
	return leaseWorldOf(lo, hi&0xffffffff|v.recordWord()<<32)
}

// recordWord packs the variables beside the holders' into the low four
// bytes of a word, little-endian: rec, fence, ghost and arg.
func (v *leaseVars) recordWord() uint64 {
	rec := v.recGen | v.recFree<<4 | v.recBy<<5
	fence := v.fence | uint8(v.fault)<<3
	ghost := v.faultAt | v.top<<3
	return uint64(rec) | uint64(fence)<<8 | uint64(ghost)<<16 | uint64(v.faultArg)<<24
}

// word packs h into the low three bytes of a word, little-endian.
func (h *leaseHolder) word() uint64 {
	lifeCall := uint64(leaseLifeCallCrashed)
	if h.flags&leaseCrashed == 0 {
		l := h.life
		switch {
		case l == leaseLifeEnded:
			l = 4
		case l == leaseLifeReturned && h.flags&leaseClosed != 0:
			l = 3
		}
		lifeCall = uint64(l*3 + h.fcall)
	}
	f := h.flags
	deadline := uint64(0)
	if f&leaseArmed != 0 {
		deadline = 1 + uint64(f&leaseDue/leaseDue) + 2*uint64(f&leaseLag/leaseLag)
	}
	observer := uint64(f&leaseSeen/leaseSeen) + uint64(f&leaseTTL/leaseTTL)
	b0 := uint64(h.st) | uint64(h.op)<<5
	b1 := uint64(h.gen) | lifeCall<<4
	b2 := uint64(f&leaseLowFlags) | (deadline*3+observer)<<4
	return b0 | b1<<8 | b2<<16
}

func (w LeaseWorld) unpack() leaseVars {
	var v leaseVars
	for i := range v.h {
		v.h[i] = leaseUnpackHolderWord(w.holder(i))
	}
	rec, fence, ghost := w.rec(), w.fence(), w.ghost()
	v.recGen, v.recFree, v.recBy = rec&15, rec>>4&1, rec>>5
	v.fence, v.fault = fence&7, w.fault()
	v.faultAt, v.top = ghost&7, ghost>>3
	v.faultArg = w.arg()
	return v
}

// leaseUnpackHolderWord inverts leaseHolder.word.
func leaseUnpackHolderWord(x uint64) leaseHolder {
	b0, b1, b2 := uint8(x), uint8(x>>8), uint8(x>>16)
	h := leaseHolder{st: b0 & 31, op: b0 >> 5, gen: b1 & 15}
	if lifeCall := b1 >> 4; lifeCall == leaseLifeCallCrashed {
		h.flags = leaseCrashed
	} else {
		l := lifeCall / 3
		h.life, h.fcall = leaseLifeOfCode[l], lifeCall%3
		if l == 3 {
			h.flags = leaseClosed
		}
	}
	clock := b2 >> 4
	h.flags |= leaseFlags(b2)&leaseLowFlags | leaseDeadlineOfCode[clock/3] | leaseObserverOfCode[clock%3]
	return h
}

// fault returns the fault the move into w recorded.
func (w LeaseWorld) fault() leaseFault { return leaseFault(w.fence() >> 3) }
