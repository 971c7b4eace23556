package linearizability

import (
	"cmp"
	"math"
	"slices"

	"github.com/anishathalye/porcupine"
)

// The reduction of operations of unknown outcome.
//
// porcupine's search is exponential in the operations pending together:
// it remembers every set of operations it has linearized, with the state
// they lead to, and an operation of unknown outcome, ending at
// math.MaxInt64, stays pending from its call to the end of its object's
// history. A run with many such operations on one object (a store's
// server stopped while workers keep trying) then takes longer than any
// timeout. reduce gives porcupine an equivalent problem with fewer and
// shorter pending operations: the history as recorded is linearizable if
// and only if the reduced one is. Each rule says why.

// input is what porcupine is given for an event: the event and, for an
// acquisition of unknown outcome, its rank.
type input struct {
	*Event
	// rank is, for an acquisition of unknown outcome, 1 + the number of
	// its object's acquisitions of unknown outcome called before it; 0
	// for every other operation. The model takes them in rank order.
	rank int
	// bounded marks an operation of unknown outcome that a Local history
	// ends before the end of time: it can no longer be placed last to
	// have no effect, so the model lets it take effect or not.
	bounded bool
}

// reduce makes the events of one object porcupine operations. An
// operation of known outcome ends at its return; one of unknown outcome
// at math.MaxInt64, except where the rules below drop it, end it
// earlier, or order it:
//
//   - A read of unknown outcome is dropped. It changes nothing and
//     returns nothing to check: any linearization of the others takes it
//     at the end.
//
//   - A fenced write or a release of unknown outcome with token t takes
//     effect only while the record holds generation t, not released. The
//     generation never falls, and once the record holds a larger one, or
//     generation t released, generation t is never held again (only an
//     acquisition makes a record held, with a larger generation). Some
//     operations of known outcome prove that the record has moved past t
//     at their linearization point, and so by their return: an
//     acquisition that got a generation above t, an accepted write with a
//     token above t, an accepted release with a token of t or more. Let B
//     be the earliest such return. If B is before the call, the operation
//     changes nothing wherever it is placed, and is dropped. Otherwise it
//     ends at B: in a linearization that places it before the proof,
//     every operation called after B already follows it; one that places
//     it after the proof, where it changes nothing, can move it back to
//     just after the proof or after the last operation that returned
//     before its call, whichever comes later, and every operation called
//     after B follows both. (This needs nothing of the store: not even
//     that a write which failed cannot land after its failure, which a
//     database's commit can.)
//
//   - Acquisitions of unknown outcome (which always end at
//     math.MaxInt64) are taken in call order (input.rank). All of them
//     have the same effect in every state (the next generation, held),
//     and no operation must come after them; so in a linearization that
//     places one called later before one called earlier, the two can
//     swap places. The one called earlier moves to the earlier place,
//     which follows every operation that returned before the later call,
//     and so every one that returned before its own. Where k of them are
//     pending, porcupine then tries k + 1 sets of them (the first j, for
//     each j) instead of 2^k.
//
//   - In a Local history (see History.Local) an operation of unknown
//     outcome ends at the latest moment it can take effect: its return
//     when it returned Unknown, its process's reap when its process was
//     killed (bounds.end). Only acquisitions left without a bound are
//     ranked: the swap that ranking relies on may move one past another's
//     bound.
//
//   - A lock attempt refused while another attempt at the same lock was
//     under way (of another process, or another task of its own) is
//     dropped. The lock is busy while a contender
//     takes it (SQLite's exclusive lock passes through shared and pending
//     locks that refuse others, and a contender paused part-way holds
//     them), which plock documents: its refusal says the lock was held or
//     being taken, and a refusal changes nothing. A refusal that no
//     concurrent attempt explains still needs a holder. plock acts inside
//     its process, whatever the store: an attempt is under way until it
//     returned, Unknown or not, or, cut short by a kill, until its
//     process's reap (bounds.attemptEnd).
//
//   - A process dies after its last clock reading (the return of its last
//     operation that returned, the call of one cut short), so its Crash is
//     called no earlier than just after it: the kill is sent earlier, but
//     the process runs on until the signal lands, and a Crash placed
//     before its victim's own operation would leave a dead process
//     holding the lock. An attempt at the lock cut short by the kill is
//     dropped: taken or not, the death frees the lock, and refusals while
//     it was under way are contended.
func reduce(evs []*Event, clients map[int]int, b bounds) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(evs))
	var acquires []int // into ops: the acquisitions of unknown outcome
	contended := contendedRefusals(evs, b)
	moved := proofsOf(evs)
	for _, e := range evs {
		_, killed := b.reaped[e.Process]
		if contended[e] || e.Kind == Lock && e.Open && killed {
			continue
		}
		call, ret, bounded := e.Call, e.Return, false
		if e.Kind == Crash && !e.Open {
			// The victim read the clock while alive: it died after that.
			call = min(max(call, b.alive[e.Process]+1), ret)
		}
		if e.Uncertain() {
			ret = b.end(e)
			bounded = ret != math.MaxInt64
			switch e.Kind {
			case Read:
				continue
			case Write, Release:
				p, ok := moved.movedPast(e.Input.Token)
				switch {
				case ok && p < e.Call:
					continue
				case ok:
					ret = min(ret, max(p, e.Call+1))
				}
			case Acquire:
				if ret == math.MaxInt64 {
					acquires = append(acquires, len(ops))
				}
			}
		}
		ops = append(ops, porcupine.Operation{ClientId: clients[e.Process], Input: &input{Event: e, bounded: bounded}, Call: call, Return: ret})
	}
	slices.SortStableFunc(acquires, func(a, b int) int { return cmp.Compare(ops[a].Call, ops[b].Call) })
	for r, i := range acquires {
		ops[i].Input.(*input).rank = r + 1
	}
	return ops
}

// proofs answers, for a generation t, the earliest return of an
// operation of known outcome among an object's events that proves the
// record past generation t held (see reduce): an acquisition that got a
// generation above t, an accepted write with a token above t, an accepted
// release with a token of t or more, a break of generation t or more.
// Each such operation proves the record past every generation below its
// level (the generation, the token, the token or the generation broken
// plus one); the levels are sorted, with the earliest
// return at or above each, so that a question costs a binary search.
type proofs struct {
	levels   []uint64 // ascending
	earliest []int64  // earliest[i]: the earliest return of a level >= levels[i]
	// top is the earliest return of a release with the largest token,
	// whose level (the token plus one) a uint64 cannot hold: it proves
	// the record past every generation, the largest too.
	top    int64
	hasTop bool
}

func proofsOf(evs []*Event) proofs {
	type proof struct {
		level uint64
		ret   int64
	}
	var ps []proof
	var p proofs
	for _, d := range evs {
		if d.Uncertain() || d.Output.Status != OK {
			continue
		}
		switch d.Kind {
		case Acquire:
			ps = append(ps, proof{d.Output.Gen, d.Return})
		case Write:
			ps = append(ps, proof{d.Input.Token, d.Return})
		case Break: // its tombstone is one above the generation broken
			if d.Output.Gen == math.MaxUint64 {
				p.noteTop(d.Return)
				continue
			}
			ps = append(ps, proof{d.Output.Gen + 1, d.Return})
		case Release:
			if d.Input.Token == math.MaxUint64 {
				p.noteTop(d.Return)
				continue
			}
			ps = append(ps, proof{d.Input.Token + 1, d.Return})
		}
	}
	slices.SortFunc(ps, func(a, b proof) int { return cmp.Compare(a.level, b.level) })
	p.levels, p.earliest = make([]uint64, len(ps)), make([]int64, len(ps))
	for i := len(ps) - 1; i >= 0; i-- {
		p.levels[i], p.earliest[i] = ps[i].level, ps[i].ret
		if i+1 < len(ps) {
			p.earliest[i] = min(p.earliest[i], p.earliest[i+1])
		}
	}
	return p
}

// movedPast returns the earliest return of an operation that proves the
// record past generation t held, and whether there is one.
func (p proofs) movedPast(t uint64) (int64, bool) {
	ret, found := p.top, p.hasTop
	if t < math.MaxUint64 {
		if i, _ := slices.BinarySearch(p.levels, t+1); i < len(p.levels) { // the first level above t
			if !found || p.earliest[i] < ret {
				ret, found = p.earliest[i], true
			}
		}
	}
	return ret, found
}

func (p *proofs) noteTop(ret int64) {
	if !p.hasTop || ret < p.top {
		p.top, p.hasTop = ret, true
	}
}

// contendedRefusals returns the refused lock attempts of evs during which
// another lock attempt was under way (see reduce).
func contendedRefusals(evs []*Event, b bounds) map[*Event]bool {
	var known, open []*Event // lock attempts of known and unknown outcome
	var longest int64
	for _, e := range evs {
		switch {
		case e.Kind != Lock:
		case e.Uncertain():
			open = append(open, e)
		default:
			known = append(known, e)
			longest = max(longest, e.Return-e.Call)
		}
	}
	slices.SortFunc(known, func(a, b *Event) int { return cmp.Compare(a.Call, b.Call) })
	var out map[*Event]bool
	for _, e := range known {
		if e.Output.Status != Refused {
			continue
		}
		during := func(d *Event, ret int64) bool {
			return d != e && d.Call < e.Return && ret > e.Call
		}
		hit := slices.ContainsFunc(open, func(d *Event) bool { return during(d, b.attemptEnd(d)) })
		// Only attempts called within the longest duration before e can
		// still be under way at its call.
		from, _ := slices.BinarySearchFunc(known, e.Call-longest, func(d *Event, t int64) int { return cmp.Compare(d.Call, t) })
		for _, d := range known[from:] {
			if hit || d.Call >= e.Return {
				break
			}
			hit = during(d, d.Return)
		}
		if hit {
			if out == nil {
				out = map[*Event]bool{}
			}
			out[e] = true
		}
	}
	return out
}

// bounds are the latest moments operations of unknown outcome can take
// effect (see History.Local).
type bounds struct {
	local  bool
	reaped map[int]int64 // process → the return of the Crash event that killed it
	alive  map[int]int64 // process → its latest clock reading: it was alive then
}

// boundsOf reads from evs the reaps of killed processes, and the latest
// moment each process is known to have been alive.
func boundsOf(evs []Event, local bool) bounds {
	b := bounds{local: local, reaped: map[int]int64{}, alive: map[int]int64{}}
	for _, e := range evs {
		switch {
		case e.Kind == Crash && !e.Open:
			b.reaped[e.Process] = e.Return
		case e.Kind == Crash:
		case e.Open:
			b.alive[e.Process] = max(b.alive[e.Process], e.Call)
		default:
			b.alive[e.Process] = max(b.alive[e.Process], e.Return)
		}
	}
	return b
}

// attemptEnd is the latest moment a lock attempt of unknown outcome can be
// under way, whatever the store: plock acts inside its process, so an
// attempt that returned is over, and one its process's death cut short is
// over once the death was reaped (the reap included).
func (b bounds) attemptEnd(e *Event) int64 {
	if !e.Open {
		return e.Return
	}
	if t, ok := b.reaped[e.Process]; ok && t > e.Call {
		return t + 1
	}
	return math.MaxInt64
}

// end returns the latest moment e, of unknown outcome, can take effect:
// its return, when it returned Unknown (a local store's call returns only
// once its code has: a SQLite statement that its context interrupts stops
// before the call returns); its process's reap, when it was left open by a
// kill; math.MaxInt64 when nothing bounds it.
func (b bounds) end(e *Event) int64 {
	switch {
	case !b.local:
		return math.MaxInt64
	case !e.Open:
		return e.Return
	}
	if t, ok := b.reaped[e.Process]; ok && t > e.Call {
		return t
	}
	return math.MaxInt64
}
