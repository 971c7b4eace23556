package worldmodel

import (
	"fmt"

	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// invariants returns the lease family's invariants: the one that looks at
// a world as it is, and one per fault a move can record.
func (m *leaseModel) invariants() []modelcheck.Invariant[LeaseWorld] {
	invs := []modelcheck.Invariant[LeaseWorld]{{Name: leaseInvOverlap, Check: m.overlap}}
	for f := leaseFaultRejected; f < leaseFaultCount; f++ {
		invs = append(invs, modelcheck.Invariant[LeaseWorld]{
			Name: leaseFaultNames[f],
			Check: func(w LeaseWorld) error {
				if w.fault() != f {
					return nil
				}
				v := w.unpack()
				return m.faultError(&v)
			},
		})
	}
	return invs
}

// overlap requires that fenced work of different generations never runs
// at once. The fence should see to it; the invariant checks that it does,
// on the packed world (it runs on every new world).
func (m *leaseModel) overlap(w LeaseWorld) error {
	first := -1
	for i := range m.n {
		if !leaseWorking(w.holder(i)) {
			continue
		}
		if first >= 0 && leaseGen(w.holder(i)) != leaseGen(w.holder(first)) {
			return fmt.Errorf("%s's fenced work with generation %d runs while %s's with generation %d does",
				leaseHolderName(i), leaseGen(w.holder(i)), leaseHolderName(first), leaseGen(w.holder(first)))
		}
		first = i
	}
	return nil
}

// leaseWorking reports whether the fenced work of the packed holder x
// runs.
func leaseWorking(x uint64) bool {
	lifeCall := uint8(x>>12) & 15
	return lifeCall != leaseLifeCallCrashed && lifeCall%3 == leaseFenceWorking
}

// leaseGen returns the packed holder x's generation.
func leaseGen(x uint64) uint8 { return uint8(x>>8) & 15 }

// faultError says what the move into w did wrong.
func (m *leaseModel) faultError(w *leaseVars) error {
	i := int(w.faultAt) - 1
	who, arg := leaseHolderName(i), w.faultArg
	switch w.fault {
	case leaseFaultRejected:
		return fmt.Errorf("%s's policy rejected %s in state %s, which the runtime fires only when it can", who, leaseTriggerName(arg), m.stateName(w.h[i].st))
	case leaseFaultOutputs:
		return fmt.Errorf("%s: %s", who, leaseOutputsReason(arg))
	case leaseFaultGenBack:
		return fmt.Errorf("%s wrote generation %d over a record of generation %d", who, w.recGen, arg)
	case leaseFaultGenRepeat:
		return fmt.Errorf("%s claimed generation %d, which an earlier claim already wrote", who, arg)
	case leaseFaultStale:
		return fmt.Errorf("%s started fenced work with generation %d, but the record is %s", who, arg, leaseRecordText(w))
	case leaseFaultLostWork:
		return fmt.Errorf("%s started fenced work with generation %d after declaring the lease lost", who, arg)
	case leaseFaultEarly:
		return fmt.Errorf("%s's claim replaced generation %d of %s, which still held it and whose deadline had not passed",
			who, w.h[arg].gen, leaseHolderName(int(arg)))
	case leaseFaultRefused:
		return fmt.Errorf("%s's acquisition found %s (facts %s) and did not claim it", who, leaseAbandonedWords(policy.Facts(arg)), leaseFamily.FormatFacts(policy.Facts(arg)))
	case leaseFaultDeadline:
		return fmt.Errorf("%s got DeadlinePassed and still holds generation %d without declaring it lost", who, arg)
	case leaseFaultConflict:
		return fmt.Errorf("%s's renewal met a conflict and it still holds generation %d without declaring it lost", who, arg)
	}
	return fmt.Errorf("unknown fault %d", w.fault)
}

// leaseAbandonedWords says, in the trace's words, why the facts f of a
// loaded record make the key acquirable.
func leaseAbandonedWords(f policy.Facts) string {
	switch {
	case f&leaseFFree != 0:
		return "the key free"
	case f&leaseFDead != 0:
		return "the holder's process dead"
	}
	return "the holder silent for the TTL since its manager first saw the revision"
}

func leaseTriggerName(t uint8) string { return leaseFamily.TriggerName(policy.TriggerID(t)) }

func leaseOutputsReason(arg uint8) string {
	switch arg {
	case leaseArgNoAnswer:
		return "FenceTaken's step must answer the RunFenced call with exactly one of runFenced and refuseFenced"
	case leaseArgCallLeft:
		return "the handle ended, or was dropped, with a repository call in flight"
	case leaseArgBadState:
		return "the step returned a state the policy does not have"
	}
	return "the runtime cannot carry out " + leaseFamily.FormatOutputs(1<<arg) + " in this step (see the lease world's runtime semantics)"
}

// owes names a pending call in a world where nothing can move any more.
func (m *leaseModel) owes(pw LeaseWorld) string {
	w := pw.unpack()
	for i := range m.n {
		h := &w.h[i]
		who := leaseHolderName(i)
		switch {
		case h.flags&leaseCrashed != 0:
		case h.life == leaseLifeAcquiring:
			return who + "'s Acquire call has not returned"
		case h.life == leaseLifeReturned && h.flags&leaseClosed != 0:
			return who + "'s Close call has not returned"
		case h.fcall != leaseFenceIdle:
			return who + "'s RunFenced call has not returned"
		}
	}
	return ""
}

// canonical sorts the holders that share a process table, which are
// interchangeable, and renames the references to them. It works on the
// packed world: a holder's three bytes encode all of its variables.
func (m *leaseModel) canonical(w LeaseWorld) LeaseWorld {
	var perm [LeaseMaxHolders]uint8 // perm[new] = old
	for i := range perm {
		perm[i] = uint8(i)
	}
	moved := leaseSortHolders(&w, &perm, 0, m.local)
	moved = leaseSortHolders(&w, &perm, m.local, m.n) || moved
	if !moved {
		return w
	}
	var rename [LeaseMaxHolders + 1]uint8 // old+1 → new+1; 0 stays 0
	c := w
	for to, from := range perm[:m.n] {
		c.lo, c.hi = leaseSetHolder(c.lo, c.hi, to, w.holder(int(from)))
		rename[from+1] = uint8(to + 1)
	}
	v := c.unpack()
	v.recBy, v.fence, v.faultAt = rename[v.recBy], rename[v.fence], rename[v.faultAt]
	if v.fault == leaseFaultEarly {
		v.faultArg = rename[v.faultArg+1] - 1
	}
	return v.pack()
}

// leaseSortHolders insertion-sorts perm[lo:hi] by the holders' packed
// variables and reports whether it moved any.
func leaseSortHolders(w *LeaseWorld, perm *[LeaseMaxHolders]uint8, lo, hi int) bool {
	moved := false
	for j := lo + 1; j < hi; j++ {
		for k := j; k > lo && leaseLess(w, int(perm[k]), int(perm[k-1])); k-- {
			perm[k], perm[k-1] = perm[k-1], perm[k]
			moved = true
		}
	}
	return moved
}

// leaseLess orders holders by their variables, then by the references the
// world holds to them, so that holders that compare equal are identical.
func leaseLess(w *LeaseWorld, a, b int) bool {
	x, y := leaseHolderKey(w.holder(a)), leaseHolderKey(w.holder(b))
	if x != y {
		return x < y
	}
	return leaseRoles(w, a) < leaseRoles(w, b)
}

// leaseHolderKey orders packed holders by their first byte, then their
// second, then their third.
func leaseHolderKey(x uint64) uint32 {
	return uint32(x&0xff)<<16 | uint32(x&0xff00) | uint32(x>>16&0xff)
}

// leaseRoles encodes the references the world holds to holder i.
func leaseRoles(w *LeaseWorld, i int) uint8 {
	var r uint8
	id := uint8(i + 1)
	if w.rec()>>5 == id {
		r |= 1
	}
	if w.fence()&7 == id {
		r |= 2
	}
	if w.ghost()&7 == id {
		r |= 4
	}
	if w.fault() == leaseFaultEarly && w.arg() == uint8(i) {
		r |= 8
	}
	return r
}
