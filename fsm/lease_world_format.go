package fsm

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
	var w LeaseWorld
	for i := range v.h {
		w.h[i] = v.h[i].pack()
	}
	v.packRecord(&w)
	return w
}

// packRecord packs the variables beside the holders'.
func (v *leaseVars) packRecord(w *LeaseWorld) {
	w.rec = v.recGen | v.recFree<<4 | v.recBy<<5
	w.fence = v.fence | uint8(v.fault)<<3
	w.ghost = v.faultAt | v.top<<3
	w.arg = v.faultArg
}

func (h *leaseHolder) pack() [3]uint8 {
	lifeCall := uint8(leaseLifeCallCrashed)
	if h.flags&leaseCrashed == 0 {
		l := h.life
		switch {
		case l == leaseLifeEnded:
			l = 4
		case l == leaseLifeReturned && h.flags&leaseClosed != 0:
			l = 3
		}
		lifeCall = l*3 + h.fcall
	}
	f := h.flags
	deadline := uint8(0)
	if f&leaseArmed != 0 {
		deadline = 1 + uint8(f&leaseDue/leaseDue) + 2*uint8(f&leaseLag/leaseLag)
	}
	observer := uint8(f&leaseSeen/leaseSeen) + uint8(f&leaseTTL/leaseTTL)
	return [3]uint8{h.st | h.op<<5, h.gen | lifeCall<<4, uint8(f&leaseLowFlags) | (deadline*3+observer)<<4}
}

func (w LeaseWorld) unpack() leaseVars {
	var v leaseVars
	for i := range w.h {
		v.h[i] = leaseUnpackHolder(w.h[i])
	}
	v.recGen, v.recFree, v.recBy = w.rec&15, w.rec>>4&1, w.rec>>5
	v.fence, v.fault = w.fence&7, w.fault()
	v.faultAt, v.top = w.ghost&7, w.ghost>>3
	v.faultArg = w.arg
	return v
}

func leaseUnpackHolder(b [3]uint8) leaseHolder {
	h := leaseHolder{st: b[0] & 31, op: b[0] >> 5, gen: b[1] & 15}
	if lifeCall := b[1] >> 4; lifeCall == leaseLifeCallCrashed {
		h.flags = leaseCrashed
	} else {
		l := lifeCall / 3
		h.life, h.fcall = leaseLifeOfCode[l], lifeCall%3
		if l == 3 {
			h.flags = leaseClosed
		}
	}
	clock := b[2] >> 4
	h.flags |= leaseFlags(b[2])&leaseLowFlags | leaseDeadlineOfCode[clock/3] | leaseObserverOfCode[clock%3]
	return h
}

// fault returns the fault the move into w recorded.
func (w LeaseWorld) fault() leaseFault { return leaseFault(w.fence >> 3) }
