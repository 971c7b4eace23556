package worldmodel

import (
	"fmt"

	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// invariants returns the lease family's invariants: the one that looks at
// a world as it is, and one per fault a move can record.
func (m *leaseModel) invariants() []modelcheck.Invariant[LeaseWorld] {
	invs := []modelcheck.Invariant[LeaseWorld]{{Name: leaseInvOverlap, Check: m.overlap}}
	for f := leaseFaultRejected; f < leaseFaultCount; f++ {
		if f == leaseFaultRefused {
			continue
		}
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
	for _, g := range refusals {
		if m.waived(g.invariant) {
			continue
		}
		invs = append(invs, modelcheck.Invariant[LeaseWorld]{
			Name: g.invariant,
			Check: func(w LeaseWorld) error {
				if w.fault() != leaseFaultRefused {
					return nil
				}
				v := w.unpack()
				if m.brokenGuarantee(policy.Facts(v.faultArg)) != g.invariant {
					return nil
				}
				return m.faultError(&v)
			},
		})
	}
	return invs
}

// refusals are the lease family's guarantees, in the order a refusal is
// blamed on them: each names the facts (of the world's truth) under which
// an acquisition must claim.
var refusals = []struct {
	invariant  string
	mask, want policy.Facts
}{
	{leaseInvFree, policy.LeaseFactRecordFree, policy.LeaseFactRecordFree},
	{leaseInvDead, policy.LeaseFactHolderDead, policy.LeaseFactHolderDead},
	{leaseInvSilentLocal, policy.LeaseFactTtlElapsed | policy.LeaseFactHolderLocal, policy.LeaseFactTtlElapsed | policy.LeaseFactHolderLocal},
	{leaseInvSilentRemote, policy.LeaseFactTtlElapsed | policy.LeaseFactHolderLocal, policy.LeaseFactTtlElapsed},
}

// brokenGuarantee returns the invariant of the first guarantee the
// policy keeps that obliges an acquisition that found truth to claim, or
// "" when none does.
func (m *leaseModel) brokenGuarantee(truth policy.Facts) string {
	for _, g := range refusals {
		if truth&g.mask == g.want && !m.waived(g.invariant) {
			return g.invariant
		}
	}
	return ""
}

// waived reports whether the policy waives the guarantee whose
// invariant is inv.
func (m *leaseModel) waived(inv string) bool { return waives(m.p, leaseFamily(), inv) }

// overlap requires that fenced work of different generations of one key
// never runs at once. The fence should see to it; the invariant checks
// that it does (it runs on every new world).
func (m *leaseModel) overlap(pw LeaseWorld) error {
	w := pw.unpack()
	first := [leaseMaxKeys]int{-1, -1}
	for i := range m.n {
		if w.h[i].flags&leaseCrashed != 0 || w.h[i].fcall != leaseFenceWorking {
			continue
		}
		k := m.key[i]
		if f := first[k]; f >= 0 && w.h[i].hs.Token != w.h[f].hs.Token {
			return fmt.Errorf("%s's fenced work with generation %d runs while %s's with generation %d does",
				m.holderName(i), w.h[i].hs.Token, m.holderName(f), w.h[f].hs.Token)
		}
		first[k] = i
	}
	return nil
}

// faultError says what the move into w did wrong.
func (m *leaseModel) faultError(w *leaseVars) error {
	i := int(w.faultAt) - 1
	who, arg := m.holderName(i), w.faultArg
	switch w.fault {
	case leaseFaultRejected:
		return fmt.Errorf("%s's policy rejected %s in state %s, which the runtime fires only when it can", who, leaseTriggerName(arg), m.stateName(w.h[i].hs.State))
	case leaseFaultOutputs:
		return fmt.Errorf("%s: %s", who, leaseOutputsReason(arg))
	case leaseFaultGenBack:
		return fmt.Errorf("%s wrote generation %d over a record of generation %d", who, m.recOf(w, i).gen, arg)
	case leaseFaultGenRepeat:
		return fmt.Errorf("%s claimed generation %d, which an earlier claim already wrote", who, arg)
	case leaseFaultStale:
		return fmt.Errorf("%s started fenced work with generation %d, but the record is %s", who, arg, m.recordText(w, int(m.key[i])))
	case leaseFaultLostWork:
		return fmt.Errorf("%s started fenced work with generation %d after declaring the lease lost", who, arg)
	case leaseFaultEarly:
		return fmt.Errorf("%s's claim replaced generation %d of %s, which still held it and whose deadline had not passed",
			who, w.h[arg].hs.Token, m.holderName(int(arg)))
	case leaseFaultRefused:
		return fmt.Errorf("%s's acquisition found %s (facts %s) and did not claim it", who, leaseAbandonedWords(policy.Facts(arg)), leaseFamily().FormatFacts(policy.Facts(arg)))
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
	case f&policy.LeaseFactRecordFree != 0:
		return "the key free"
	case f&policy.LeaseFactHolderDead != 0:
		return "the holder's process dead"
	case f&policy.LeaseFactHolderLocal != 0:
		return "the holder, on its process table, silent for the TTL since its manager first saw the revision"
	}
	return "the holder, on another process table, silent for the TTL since its manager first saw the revision"
}

func leaseTriggerName(t uint8) string { return leaseFamily().TriggerName(policy.TriggerID(t)) }

func leaseOutputsReason(arg uint8) string {
	switch arg {
	case leaseArgNoAnswer:
		return "FenceTaken's step must answer the RunFenced call with exactly one of runFenced and refuseFenced"
	case leaseArgCallLeft:
		return "the handle ended, or was dropped, with a repository call in flight"
	case leaseArgBadState:
		return "the step returned a state the policy does not have"
	}
	return "the runtime cannot carry out " + leaseFamily().FormatOutputs(1<<arg) + " in this step (see the lease world's runtime semantics)"
}

// owes names a pending call in a world where nothing can move any more.
func (m *leaseModel) owes(pw LeaseWorld) string {
	w := pw.unpack()
	for i := range m.n {
		h := &w.h[i]
		who := m.holderName(i)
		switch {
		case h.flags&leaseCrashed != 0:
		case h.hs.Life == leasestep.LifeAcquiring:
			return who + "'s Acquire call has not returned"
		case h.hs.Life == leasestep.LifeHeld && h.hs.Closing:
			return who + "'s Close call has not returned"
		case h.fcall != leaseFenceIdle:
			return who + "'s RunFenced call has not returned"
		}
	}
	return ""
}

// canonical sorts the holders that share a process table, which are
// interchangeable, and renames the references to them. A holder's bits
// encode all of its variables.
func (m *leaseModel) canonical(w LeaseWorld) LeaseWorld {
	var perm [LeaseMaxHolders]uint8 // perm[new] = old
	var keys [LeaseMaxHolders]uint64
	sorted := true
	for i := range perm {
		perm[i] = uint8(i)
		keys[i] = w.holder(i)
		if m.sorted&(1<<i) != 0 && keys[i] <= keys[i-1] {
			sorted = false
		}
	}
	if sorted {
		return w // strictly ascending in each class: nothing ties, nothing moves
	}
	// The classes: the holders of each process table, but for the first
	// when it shares its process with h0/b.
	lo := 0
	if m.second >= 0 {
		lo = 1
	}
	v := w.unpack()
	moved := leaseSortHolders(&v, &keys, &perm, lo, m.local)
	moved = leaseSortHolders(&v, &keys, &perm, max(lo, m.local), m.b.Holders) || moved
	if !moved {
		return w
	}
	var rename [LeaseMaxHolders + 1]uint8 // old+1 → new+1; 0 stays 0
	c := v
	for to, from := range perm[:m.n] {
		c.h[to] = v.h[from]
		rename[from+1] = uint8(to + 1)
	}
	for k := range c.rec {
		c.rec[k].by, c.rec[k].fence = rename[v.rec[k].by], rename[v.rec[k].fence]
	}
	c.faultAt = rename[v.faultAt]
	if c.fault == leaseFaultEarly {
		c.faultArg = rename[v.faultArg+1] - 1
	}
	return c.pack()
}

// leaseSortHolders insertion-sorts perm[lo:hi] by the holders' packed
// variables and reports whether it moved any.
func leaseSortHolders(v *leaseVars, keys *[LeaseMaxHolders]uint64, perm *[LeaseMaxHolders]uint8, lo, hi int) bool {
	moved := false
	for j := lo + 1; j < hi; j++ {
		for k := j; k > lo && leaseLess(v, keys, int(perm[k]), int(perm[k-1])); k-- {
			perm[k], perm[k-1] = perm[k-1], perm[k]
			moved = true
		}
	}
	return moved
}

// leaseLess orders holders by their variables, then by the references the
// world holds to them, so that holders that compare equal are identical.
func leaseLess(v *leaseVars, keys *[LeaseMaxHolders]uint64, a, b int) bool {
	if keys[a] != keys[b] {
		return keys[a] < keys[b]
	}
	return leaseRoles(v, a) < leaseRoles(v, b)
}

// leaseRoles encodes the references the world holds to holder i.
func leaseRoles(v *leaseVars, i int) uint8 {
	var r uint8
	id := uint8(i + 1)
	if v.faultAt == id {
		r |= 1
	}
	if v.fault == leaseFaultEarly && v.faultArg == uint8(i) {
		r |= 2
	}
	for k := range v.rec {
		if v.rec[k].by == id {
			r |= 4 << (2 * k)
		}
		if v.rec[k].fence == id {
			r |= 8 << (2 * k)
		}
	}
	return r
}
