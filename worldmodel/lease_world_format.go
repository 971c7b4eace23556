package worldmodel

import (
	"strconv"
	"strings"

	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/policy"
)

// format renders w for traces: each key's record and fence, then one
// line per holder.
func (m *leaseModel) format(pw LeaseWorld) string {
	w := pw.unpack()
	var b strings.Builder
	for k := range m.keys() {
		if k > 0 {
			b.WriteString("; key b: ")
		}
		b.WriteString(m.recordText(&w, k))
		if f := w.rec[k].fence; f != 0 {
			b.WriteString("; fence held by " + m.holderName(int(f)-1))
		}
	}
	for i := range m.n {
		b.WriteString("\n     ")
		m.formatHolder(&b, &w, i)
	}
	return b.String()
}

// keys returns how many keys the world has.
func (m *leaseModel) keys() int {
	if m.second >= 0 {
		return 2
	}
	return 1
}

// recordText renders key k's record.
func (m *leaseModel) recordText(w *leaseVars, k int) string {
	r := &w.rec[k]
	if r.by == 0 {
		return "no record"
	}
	s := "record g" + strconv.Itoa(int(r.gen)) + " by " + m.holderName(int(r.by)-1)
	if r.free != 0 {
		s += " (tombstone)"
	}
	return s
}

var leaseLifeNames = [...]string{"", "acquiring", "returned", "ended"}

var leaseRevNames = [...]string{"none", "stale", "current"}

var leaseFenceCallNames = [...]string{"", "RunFenced waits", "fenced work runs", "RunFenced holds the fence"}

var leaseFlagNames = [leaseFlagCount]string{"renewal armed", "deadline armed", "deadline passed", "clock lags",
	"deadline started late", "TTL passed since the note", "saw revision", "TTL passed", "crashed", "renewal batched"}

func (m *leaseModel) formatHolder(b *strings.Builder, w *leaseVars, i int) {
	h := &w.h[i]
	hs := &h.hs
	b.WriteString(m.holderName(i) + " " + m.stateName(hs.State))
	if hs.Life != leasestep.LifeIdle {
		b.WriteString(" g" + strconv.Itoa(int(hs.Token)) + ", " + leaseLifeNames[hs.Life])
	}
	if hs.Closing {
		b.WriteString(", Close called")
	}
	if hs.Lost {
		b.WriteString(", lost")
	}
	if hs.Call != leasestep.CallNone {
		b.WriteString(", " + hs.Call.String() + " of g" + strconv.Itoa(int(hs.Write.Generation)) + " over a " + leaseRevNames[min(hs.Write.Expected, 2)] + " revision in flight")
	}
	if hs.Wrote != 0 {
		b.WriteString(", its last write " + leaseRevNames[min(hs.Wrote, 2)])
	}
	if h.note != leaseRevNone {
		b.WriteString(", notes a " + leaseRevNames[min(h.note, 2)] + " revision")
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

func (m *leaseModel) stateName(s policy.StateID) string {
	if int(s) < len(m.states) {
		return m.states[s].Name
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}
