package worldmodel

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rivus/collab/policy"
)

// pack encodes the lane's record in the low 40 bits.
func (l *laneVars) pack() uint64 {
	var flags uint64
	for i, b := range [...]bool{l.entry, l.reserved, l.queued, l.interrupted, l.timer, l.owed} {
		if b {
			flags |= 1 << i
		}
	}
	return uint64(l.state) | uint64(l.acts)<<8 | uint64(l.slots)<<16 | flags<<24
}

// format renders a world for traces, one segment per key, then the queue
// and the totals.
func (m *laneModel) format(w LaneWorld) string {
	var b strings.Builder
	for k := range m.keys {
		l := &w.lanes[k]
		if k > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(laneKeyName(k) + " ")
		if !l.entry && !l.holds() && !l.owed {
			b.WriteString("-")
			continue
		}
		b.WriteString(m.stateName(l.state))
		if tags := laneTags(l); tags != "" {
			b.WriteString(" [" + tags + "]")
		}
	}
	b.WriteString("; queue " + m.keyList(w.queue[:w.qlen]))
	if !slices.Equal(w.waits[:w.wlen], w.queue[:w.qlen]) {
		b.WriteString(", waiting " + m.keyList(w.waits[:w.wlen]))
	}
	used, reserved := 0, 0
	for k := range m.keys {
		used += int(w.lanes[k].slots)
		if w.lanes[k].reserved {
			reserved++
		}
	}
	fmt.Fprintf(&b, "; slots %d/%d", used, m.limits.MaxConcurrent)
	if m.limits.MaxQueued > 0 {
		fmt.Fprintf(&b, ", places %d/%d", int(w.qlen)+reserved, m.limits.MaxQueued)
	}
	if w.closed {
		b.WriteString("; closed")
	}
	if w.quiet {
		b.WriteString("; callers stopped")
	}
	return b.String()
}

// laneTags lists a lane's bookkeeping for format.
func laneTags(l *laneVars) string {
	var tags []string
	if !l.entry {
		tags = append(tags, "no entry")
	}
	switch {
	case l.acts == 1:
		tags = append(tags, "running")
	case l.acts > 1:
		tags = append(tags, fmt.Sprintf("%d running", l.acts))
	}
	if l.interrupted {
		tags = append(tags, "interrupted")
	}
	if l.timer {
		tags = append(tags, "timer")
	}
	if l.slots != l.acts {
		tags = append(tags, fmt.Sprintf("%d slots", l.slots))
	}
	if l.reserved {
		tags = append(tags, "reserved")
	}
	if l.owed {
		tags = append(tags, "owes a wake")
	}
	return strings.Join(tags, ", ")
}

func (m *laneModel) keyList(keys []uint8) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = laneKeyName(int(k))
	}
	return "[" + strings.Join(names, " ") + "]"
}

// stateName and triggerName name IDs by the policy's table.
func (m *laneModel) stateName(s policy.StateID) string {
	if m.table != nil && int(s) < len(m.table.States) {
		return m.table.States[s].Name
	}
	return "state " + strconv.Itoa(int(s))
}

func (m *laneModel) triggerName(t policy.TriggerID) string {
	if m.table != nil && int(t) < len(m.table.Triggers) {
		return m.table.Triggers[t].Name
	}
	return "trigger " + strconv.Itoa(int(t))
}
