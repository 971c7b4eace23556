package worldmodel

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// invariants lists the properties every reachable world must have: first
// those a move breaks while the runtime carries it out (recorded in bad),
// then those of the runtime's variables.
func (m *laneModel) invariants() []modelcheck.Invariant[LaneWorld] {
	var invs []modelcheck.Invariant[LaneWorld]
	for _, name := range []string{laneInvRuntime, laneInvClosed, laneInvBidden, laneInvFair,
		laneInvAnswer, laneInvReport, laneInvInterrupt} {
		invs = append(invs, modelcheck.Invariant[LaneWorld]{Name: name, Check: m.eventCheck(name)})
	}
	invs = append(invs,
		modelcheck.Invariant[LaneWorld]{Name: laneInvOne, Check: m.checkOne},
		modelcheck.Invariant[LaneWorld]{Name: laneInvConcurrent, Check: m.checkConcurrent},
		modelcheck.Invariant[LaneWorld]{Name: laneInvQueued, Check: m.checkQueued},
		modelcheck.Invariant[LaneWorld]{Name: laneInvSlots, Check: m.checkSlots},
		modelcheck.Invariant[LaneWorld]{Name: laneInvServed, Check: m.checkServed},
		modelcheck.Invariant[LaneWorld]{Name: laneInvPlaces, Check: m.checkPlaces},
		modelcheck.Invariant[LaneWorld]{Name: laneInvEntries, Check: m.checkEntries},
	)
	return slices.DeleteFunc(invs, func(inv modelcheck.Invariant[LaneWorld]) bool { return waives(m.p, laneFamily(), inv.Name) })
}

// eventCheck returns the check of the event invariant name: it fails when
// the move to the world broke it.
func (m *laneModel) eventCheck(name string) func(LaneWorld) error {
	return func(w LaneWorld) error {
		if w.bad == laneOK || laneBadInfo[w.bad].inv != name {
			return nil
		}
		return fmt.Errorf(laneBadInfo[w.bad].text, laneKeyName(int(w.badKey)),
			m.triggerName(policy.TriggerID(w.badArg)), m.stateName(w.badState), laneKeyName(int(w.badArg)))
	}
}

// checkOne fails on a second activation of a key: one the runtime's step
// refused to start, or one that runs.
func (m *laneModel) checkOne(w LaneWorld) error {
	if err := m.eventCheck(laneInvOne)(w); err != nil {
		return err
	}
	for k := range m.keys {
		if n := w.lanes[k].acts; n > 1 {
			return fmt.Errorf("%s runs %d activations", laneKeyName(k), n)
		}
	}
	return nil
}

func (m *laneModel) checkConcurrent(w LaneWorld) error {
	running := 0
	for k := range m.keys {
		running += int(w.lanes[k].acts)
	}
	if running > m.limits.MaxConcurrent {
		return fmt.Errorf("%d activations run, MaxConcurrent is %d", running, m.limits.MaxConcurrent)
	}
	return nil
}

func (m *laneModel) checkQueued(w LaneWorld) error {
	reserved := 0
	for k := range m.keys {
		if w.lanes[k].reserved {
			reserved++
		}
	}
	if m.limits.MaxQueued > 0 && int(w.qlen)+reserved > m.limits.MaxQueued {
		return fmt.Errorf("queued lanes (%d) plus reserved places (%d) exceed MaxQueued %d", w.qlen, reserved, m.limits.MaxQueued)
	}
	return nil
}

func (m *laneModel) checkSlots(w LaneWorld) error {
	for k := range m.keys {
		if l := &w.lanes[k]; l.slots != l.acts {
			return fmt.Errorf("%s holds %d slots and runs %d activations", laneKeyName(k), l.slots, l.acts)
		}
	}
	return nil
}

func (m *laneModel) checkServed(w LaneWorld) error {
	for k := range m.keys {
		if l := &w.lanes[k]; l.owed && l.acts == 0 && !l.queued {
			return fmt.Errorf("%s owes a wake, runs nothing and is not in the queue, so nothing will serve the wake", laneKeyName(k))
		}
	}
	return nil
}

func (m *laneModel) checkPlaces(w LaneWorld) error {
	for k := range m.keys {
		l, name := &w.lanes[k], laneKeyName(k)
		switch {
		case l.queued && !l.owed:
			return fmt.Errorf("%s waits in the queue but owes no wake", name)
		case l.queued && l.acts > 0:
			return fmt.Errorf("%s waits in the queue while its activation runs", name)
		case l.reserved && !(l.owed && l.acts > 0):
			return fmt.Errorf("%s holds a reserved place but owes no follow-up to a running activation", name)
		case l.owed && l.acts > 0 && !l.reserved:
			return fmt.Errorf("%s owes a follow-up but holds no queue place for it", name)
		}
	}
	return nil
}

func (m *laneModel) checkEntries(w LaneWorld) error {
	for k := range m.keys {
		switch l := &w.lanes[k]; {
		case l.entry && !l.holds():
			return fmt.Errorf("%s keeps an entry (%s) though it holds nothing, so the map only grows", laneKeyName(k), m.stateName(l.state))
		case !l.entry && l.holds():
			return fmt.Errorf("%s was forgotten though it holds %s", laneKeyName(k), laneHeld(l))
		}
	}
	return nil
}

// laneHeld says what a lane holds.
func laneHeld(l *laneVars) string {
	var held []string
	if l.acts > 0 {
		held = append(held, "a running activation")
	}
	if l.slots > 0 {
		held = append(held, "a slot")
	}
	if l.queued {
		held = append(held, "a queue position")
	}
	if l.reserved {
		held = append(held, "a reserved place")
	}
	return strings.Join(held, ", ")
}

// owes describes what a world without moves still owes. Only a world after
// the callers stopped, with no activation running, has no moves; in it
// every wake must have been served and every lane forgotten.
func (m *laneModel) owes(w LaneWorld) string {
	for k := range m.keys {
		l, name := &w.lanes[k], laneKeyName(k)
		switch {
		case l.owed:
			return name + " owes a wake that nothing will serve"
		case l.queued && m.slotFree(&w):
			return name + " waits in the queue while a slot is free"
		case l.holds():
			return name + " still holds " + laneHeld(l)
		case l.entry:
			return name + " still has an entry"
		}
	}
	return ""
}

// canonical renames the keys so that their records, with their places in
// the queue and the wait order, are sorted: keys are interchangeable, so
// worlds that differ only in key names are one world.
func (m *laneModel) canonical(w LaneWorld) LaneWorld {
	var rank [LaneMaxKeys]uint64
	for i, k := range w.queue[:w.qlen] {
		rank[k] |= uint64(i+1) << 40
	}
	for i, k := range w.waits[:w.wlen] {
		rank[k] |= uint64(i+1) << 48
	}
	// The keys a fault names rank apart too, so that keys of equal rank
	// are equal in every respect and any order of them is the same world:
	// symmetric worlds then have one canonical form, which a trace's
	// replay relies on.
	if w.bad != laneOK {
		rank[w.badKey] |= 1 << 56
		if w.bad == laneBadStartUnfair {
			rank[w.badArg] |= 1 << 57
		}
	}
	var order [LaneMaxKeys]uint8 // order[new] = old
	for k := range m.keys {
		rank[k] |= w.lanes[k].pack()
		order[k] = uint8(k)
	}
	moved := false
	for i := 1; i < m.keys; i++ {
		for j := i; j > 0 && rank[order[j]] < rank[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
			moved = true
		}
	}
	if !moved {
		return w
	}
	var to [LaneMaxKeys]uint8 // to[old] = new
	c := w
	for nu, old := range order[:m.keys] {
		c.lanes[nu] = w.lanes[old]
		to[old] = uint8(nu)
	}
	for i := range w.qlen {
		c.queue[i] = to[w.queue[i]]
	}
	for i := range w.wlen {
		c.waits[i] = to[w.waits[i]]
	}
	if w.bad != laneOK {
		c.badKey = to[w.badKey]
		if w.bad == laneBadStartUnfair {
			c.badArg = to[w.badArg]
		}
	}
	return c
}
