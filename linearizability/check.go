package linearizability

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
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

// partition is the history of one object: its events, the porcupine
// operations they are checked as (see reduce), whose inputs point into
// the events, and those operations cut into segments (see chain).
type partition struct {
	id   ObjectID
	evs  []*Event
	ops  []porcupine.Operation
	segs []segment
	// frame is the client of the segments' opening and closing
	// operations: one past every process's.
	frame int
	// starts are, for a failing segment, the states it was checked
	// from; it is shown from the first.
	starts []state
	// linearized: the segments were found linearizable, one after
	// another, to the end.
	linearized bool
	// bounded: its operations of unknown outcome are bounded (see
	// History.Local): a Local history's, and the lock's in any history,
	// as plock acts inside its process whatever the lease store.
	bounded bool
}

// Report is the outcome of Check.
type Report struct {
	Verdict   Verdict
	Keys      int           // objects checked: each key's lease and lock count apart
	Ops       int           // operations checked (a crash counts once per lock it may free)
	Uncertain int           // operations of unknown outcome (open, or returned Unknown)
	Elapsed   time.Duration // time the check took
	// Failing lists the objects whose histories are not linearizable,
	// the shortest failing segment first (see the package doc).
	// FailingKey is the key of the first.
	Failing    []ObjectID
	FailingKey string
	// Segments is how many segments the objects' histories were cut
	// into, and Longest the most operations of one.
	Segments, Longest int
	// Stuck is, after a violation, where porcupine's search stopped in
	// the shortest failing segment; nil otherwise.
	Stuck *Stuck

	parts   []partition // every object, for WriteHTML on request
	failing *partition  // the shortest failing segment, as an object of its own
	// diag is the verbose check of failing that found Stuck, which
	// WriteHTML draws.
	diag    *porcupine.LinearizationInfo
	timeout time.Duration
}

// Check checks h, partitioned by object (the lease and the lock of each
// key), with porcupine, in at most timeout (which must be more than 0: a
// history can take exponential time). Each object's history is checked in
// segments, one after another (see chain); the objects are checked in
// parallel, each to its end or its first failing segment.
//
// After a violation, Check checks the shortest failing segment again,
// verbosely, within a second timeout, to find where porcupine's search
// stopped (Report.Stuck): the check and its diagnosis take up to timeout
// each.
//
// An operation of unknown outcome (Event.Uncertain) may take effect at
// any moment after its call, or never (see the package doc). It is
// checked as if it returned at math.MaxInt64, after everything, unless
// the object's known outcomes prove that it cannot take effect after
// some moment; one that cannot change the object is left out (reduce).
func Check(h History, timeout time.Duration) Report {
	start := time.Now()
	deadline := start.Add(nonZero(timeout))
	parts := partitions(h.Events, h.Local)
	r := Report{Verdict: Linearizable, Keys: len(parts), parts: parts, timeout: timeout}
	for _, p := range parts {
		r.Ops += len(p.evs)
		r.Segments += len(p.segs)
		for _, sg := range p.segs {
			r.Longest = max(r.Longest, len(sg.ops))
		}
	}
	for _, e := range h.Events {
		if e.Uncertain() {
			r.Uncertain++
		}
	}
	verdicts, failed := make([]Verdict, len(parts)), make([]int, len(parts))
	bounded, unbounded := model(true), model(false)
	parallel(len(parts), func(i int) {
		m := unbounded
		if parts[i].bounded {
			m = bounded
		}
		verdicts[i], failed[i] = chain(m, parts[i].bounded, parts[i].segs, parts[i].frame, deadline)
		parts[i].linearized = verdicts[i] == Linearizable
	})
	var fails []partition
	for i, v := range verdicts {
		switch {
		case v == Violation:
			fails = append(fails, failingSegment(&parts[i], failed[i]))
		case v == Inconclusive && r.Verdict == Linearizable:
			r.Verdict = Inconclusive
		}
	}
	if len(fails) > 0 {
		slices.SortStableFunc(fails, func(a, b partition) int { return cmp.Compare(len(a.ops), len(b.ops)) })
		r.Verdict, r.failing, r.FailingKey = Violation, &fails[0], fails[0].id.Key
		for _, f := range fails {
			r.Failing = append(r.Failing, f.id)
		}
		r.Stuck, r.diag = diagnose(r.failing, timeout)
	}
	r.Elapsed = time.Since(start)
	return r
}

// nonZero keeps a zero timeout (porcupine's "none") from disabling it.
func nonZero(d time.Duration) time.Duration { return max(d, time.Nanosecond) }

// parallel runs f(0) … f(n-1), as many at once as there are processors,
// and waits for them.
func parallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// failingSegment returns segment i of p, which no start state
// linearizes, as an object of its own: its events (the operations and
// those reduce left out, from its first call to its last return), and
// its operations after an opening to the first of its start states.
func failingSegment(p *partition, i int) partition {
	sg := &p.segs[i]
	first, last := span(sg.ops)
	var evs []*Event
	for _, e := range p.evs {
		if e.Call >= first && e.Call <= last {
			evs = append(evs, e)
		}
	}
	return partition{id: p.id, evs: evs, ops: framed(sg.ops, p.frame, sg.starts[:1], nil), frame: p.frame, starts: sg.starts}
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
		pb := b
		if parts[j].id.Object == lockObject.String() {
			pb.local = true // plock acts inside its process, whatever the store
		}
		parts[j].bounded = pb.local
		parts[j].ops = reduce(parts[j].evs, clients, pb)
		parts[j].segs = cut(parts[j].ops)
		parts[j].frame = len(clients)
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
