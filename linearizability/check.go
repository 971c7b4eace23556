package linearizability

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// Verdict is the outcome of Check.
type Verdict uint8

// The verdicts.
const (
	// Inconclusive: the timeout passed before the check finished; no
	// violation was found in the time.
	Inconclusive Verdict = iota
	// Linearizable: every object's history is linearizable.
	Linearizable
	// Violation: at least one object's history is not.
	Violation
)

func (v Verdict) String() string {
	switch v {
	case Linearizable:
		return "linearizable"
	case Violation:
		return "violation"
	}
	return "inconclusive"
}

// ObjectID names one checked object: the lease or the lock of a key.
type ObjectID struct {
	Object string // "lease" or "lock"
	Key    string
}

func (o ObjectID) String() string { return fmt.Sprintf("%s %q", o.Object, o.Key) }

// partition is the history of one object: its events, and the
// porcupine operations they are checked as (see reduce), whose inputs
// point into the events.
type partition struct {
	id  ObjectID
	evs []*Event
	ops []porcupine.Operation
}

// Report is the outcome of Check.
type Report struct {
	Verdict   Verdict
	Keys      int           // objects checked: each key's lease and lock count apart
	Ops       int           // operations checked (a crash counts once per lock it may free)
	Uncertain int           // operations of unknown outcome (open, or returned Unknown)
	Elapsed   time.Duration // time the check took
	// Failing lists the objects whose histories are not linearizable,
	// the shortest history first, as far as the diagnosis got in its
	// time (it runs after a violation is found, with a timeout of its
	// own). FailingKey is the key of the first.
	Failing    []ObjectID
	FailingKey string

	parts   []partition // every object, for WriteHTML on request
	failing *partition  // the shortest failing object
	timeout time.Duration
	local   bool // the history was Local: the model to check it with
}

// Check checks h, partitioned by object (the lease and the lock of each
// key), with porcupine, in at most timeout (which must be more than 0: a
// history can take exponential time). After a violation it checks the
// objects one at a time, shortest first, to name the failing ones, in at
// most another timeout.
//
// An operation of unknown outcome (Event.Uncertain) may take effect at
// any moment after its call, or never (see the package doc). It is
// checked as if it returned at math.MaxInt64, after everything, unless
// the object's known outcomes prove that it cannot take effect after
// some moment; one that cannot change the object is left out (reduce).
func Check(h History, timeout time.Duration) Report {
	start := time.Now()
	parts := partitions(h.Events, h.Local)
	r := Report{Verdict: Linearizable, Keys: len(parts), parts: parts, timeout: timeout, local: h.Local}
	for _, p := range parts {
		r.Ops += len(p.evs)
	}
	for _, e := range h.Events {
		if e.Uncertain() {
			r.Uncertain++
		}
	}
	m := model(h.Local)
	m.Partition = func([]porcupine.Operation) [][]porcupine.Operation { return opsOf(parts) }
	switch porcupine.CheckOperationsTimeout(m, nil, nonZero(timeout)) {
	case porcupine.Unknown:
		r.Verdict = Inconclusive
	case porcupine.Illegal:
		r.Verdict = Violation
		r.diagnose()
	}
	r.Elapsed = time.Since(start)
	return r
}

// nonZero keeps a zero timeout (porcupine's "none") from disabling it.
func nonZero(d time.Duration) time.Duration { return max(d, time.Nanosecond) }

// diagnose checks the objects one at a time, shortest history first,
// to list the failing ones.
func (r *Report) diagnose() {
	order := slices.Clone(r.parts)
	slices.SortStableFunc(order, func(a, b partition) int { return cmp.Compare(len(a.ops), len(b.ops)) })
	deadline := time.Now().Add(r.timeout)
	m := model(r.local)
	for i := range order {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		if porcupine.CheckOperationsTimeout(m, order[i].ops, left) != porcupine.Illegal {
			continue
		}
		r.Failing = append(r.Failing, order[i].id)
		if r.failing == nil {
			r.failing = &order[i]
			r.FailingKey = order[i].id.Key
		}
	}
}

// opsOf returns the partitions' operations, as porcupine's Partition
// returns them.
func opsOf(parts []partition) [][]porcupine.Operation {
	out := make([][]porcupine.Operation, len(parts))
	for i, p := range parts {
		out[i] = p.ops
	}
	return out
}

// partitions splits events by object, in key order. A crash with no key
// joins every lock's and fence's history (it frees whichever its process
// held);
// crashes change no lease, and join none. Each object's events are then
// made porcupine operations by reduce.
func partitions(evs []Event, local bool) []partition {
	clients := clientIDs(evs)
	b := boundsOf(evs, local)
	byID := make(map[ObjectID]int)
	var parts []partition
	var crashes []*Event
	for i := range evs {
		e := &evs[i]
		if e.Kind == Crash && e.Key == "" {
			crashes = append(crashes, e)
			continue
		}
		id := ObjectID{Object: e.Kind.object().String(), Key: e.Key}
		j, ok := byID[id]
		if !ok {
			j = len(parts)
			byID[id] = j
			parts = append(parts, partition{id: id})
		}
		parts[j].evs = append(parts[j].evs, e)
	}
	for j := range parts {
		if o := parts[j].id.Object; o == lockObject.String() || o == fenceObject.String() {
			parts[j].evs = append(parts[j].evs, crashes...)
		}
		parts[j].ops = reduce(parts[j].evs, clients, b)
	}
	slices.SortFunc(parts, func(a, b partition) int {
		return cmp.Or(cmp.Compare(a.id.Key, b.id.Key), cmp.Compare(a.id.Object, b.id.Object))
	})
	return parts
}

// clientIDs numbers the processes from 0 in increasing order, as
// porcupine's visualisation wants its client ids.
func clientIDs(evs []Event) map[int]int {
	var ps []int
	for _, e := range evs {
		ps = append(ps, e.Process)
	}
	slices.Sort(ps)
	ps = slices.Compact(ps)
	ids := make(map[int]int, len(ps))
	for i, p := range ps {
		ids[p] = i
	}
	return ids
}
