package linearizability

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
)

// genHistory simulates procs processes working on keys objects (one in
// ten a lock, the others leases) for n operations, and returns the
// history they would record: each operation takes effect at a moment
// inside its interval, so the history is linearizable by construction.
// Lease sessions are acquire, two fenced writes (with the process's last
// token, stale if it was refused), a read, and a release; lock sessions
// are lock and unlock. The last operation of every fourth process is
// left open, as by a crash.
func genHistory(seed uint64, n, keys, procs int) History {
	rng := rand.New(rand.NewPCG(seed, 1))
	type timed struct {
		e   Event
		lin int64 // when it takes effect
	}
	ops := make([]timed, 0, n)
	clocks := make([]int64, procs)
	for len(ops) < n {
		p := rng.IntN(procs)
		k := rng.IntN(keys)
		kinds := []Kind{Acquire, Write, Write, Read, Release}
		if k%10 == 9 {
			kinds = []Kind{Lock, Unlock}
		}
		for _, kind := range kinds[:min(len(kinds), n-len(ops))] {
			call := clocks[p] + rng.Int64N(50_000)
			lin := call + 1 + rng.Int64N(100_000)
			ret := lin + 1 + rng.Int64N(100_000)
			clocks[p] = ret
			ops = append(ops, timed{Event{Process: p, Key: fmt.Sprintf("key%02d", k), Kind: kind, Call: call, Return: ret}, lin})
		}
	}
	slices.SortFunc(ops, func(a, b timed) int { return cmp.Compare(a.lin, b.lin) })
	objects := make(map[string]state)
	tokens := make([]uint64, procs) // each process's last token
	last := make([]int, procs)      // index of each process's last operation
	for i := range ops {
		e := &ops[i].e
		s := objects[e.Key]
		switch e.Kind {
		case Write:
			e.Input = Input{Token: tokens[e.Process], Value: fmt.Sprintf("v%d", i)}
		case Release:
			e.Input = Input{Token: tokens[e.Process]}
		}
		ok, next := applies(s, e)
		e.Output = outcome(s, e, ok, next)
		if e.Output.Status != Refused {
			s = next
		}
		if e.Kind == Acquire && e.Output.Status == OK {
			tokens[e.Process] = s.gen
		}
		objects[e.Key] = s
		last[e.Process] = i
	}
	evs := make([]Event, len(ops))
	for i := range ops {
		evs[i] = ops[i].e
	}
	for p := 0; p < procs; p += 4 {
		evs[last[p]].Open, evs[last[p]].Return, evs[last[p]].Output = true, 0, Output{}
	}
	sortEvents(evs)
	return History{Events: evs}
}

// outcome is what the simulated object answers e in s: a refusal where
// a held object refuses (a held lease to an acquire, a held lock to a
// lock), success where e applies, Done for a release (as Lease.Close
// says) except one of an odd token that applies (as a store that says
// it wrote the tombstone), a refusal otherwise.
func outcome(s state, e *Event, applied bool, next state) Output {
	switch {
	case e.Kind == Release && applied && e.Input.Token%2 == 1:
		return Output{Status: OK}
	case e.Kind == Release:
		return Output{Status: Done}
	case e.Kind == Acquire && s.held, e.Kind == Lock && s.holder != 0, !applied:
		return Output{Status: Refused}
	case e.Kind == Acquire:
		return Output{Status: OK, Gen: next.gen}
	case e.Kind == Read:
		return Output{Status: OK, Value: s.value}
	}
	return Output{Status: OK}
}

// genCampaign is genHistory with the uncertainty of a real campaign on a
// local store: a share of the operations returned Unknown (whatever they
// did), and every operation left open has its process's kill recorded
// after the moment it took effect, so that the Local history bounds it.
func genCampaign(seed uint64, n, keys, procs int, share float64) History {
	h := genHistory(seed, n, keys, procs)
	rng := rand.New(rand.NewPCG(seed, 2))
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Open:
			// It took effect within 100 µs of its call, if at all.
			h.Events = append(h.Events, Event{Process: e.Process, Kind: Crash, Output: Output{Status: OK},
				Call: e.Call + 300_000, Return: e.Call + 310_000})
		case rng.Float64() < share:
			e.Output = Output{Status: Unknown}
		}
	}
	sortEvents(h.Events)
	h.Local = true
	return h
}
