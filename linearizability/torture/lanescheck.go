package torture

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/rivus/collab/lanes"
)

// laneEventKind is what a lanes campaign's event records.
type laneEventKind uint8

const (
	laneWake   laneEventKind = iota + 1 // a Wake returned
	laneCancel                          // a Cancel returned
	laneClose                           // a Close returned
	laneBegin                           // an activation began
	laneEnd                             // an activation is about to return
	laneExit                            // OnExit heard an exit
	laneStall                           // a wake still owed drainPatience after the wakers stopped
)

// laneEvent is one event of a lanes campaign. Its moments are read from
// inside what it records: at is after a call returned (wake, cancel,
// close), after an activation began, before it returns, inside OnExit;
// call is before a call was made. So a recorded span lies within the
// real one, and an order of recorded moments that the lanes forbid is an
// order of real moments they forbid.
type laneEvent struct {
	kind     laneEventKind
	inst     int // the set of lanes
	key      int
	seq      int64         // a wake's number; the key's last number when an activation began
	call, at time.Duration // since the campaign's start, on the monotonic clock
	result   lanes.WakeResult
	err      error // what the call or the activation returned
	cause    error // the cause of the activation's context, if it saw it end
	panicked bool  // the activation panicked
	exit     lanes.Exit
}

// laneLog is the campaign's events, in the order they were added.
type laneLog struct {
	start time.Time
	mu    sync.Mutex
	evs   []laneEvent
}

func (l *laneLog) now() time.Duration { return time.Since(l.start) }

// add records e at this moment (read before the lock is taken, so never
// later than the caller's next step).
func (l *laneLog) add(e laneEvent) {
	e.at = l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, e)
}

// owed returns, for set n of lanes, a successful wake that no activation
// begun since served and no drop reported since its call, or nil.
func (l *laneLog) owed(n int) *laneEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	type keyState struct {
		wake     *laneEvent // the wake of the largest number
		served   int64
		lastDrop time.Duration
	}
	keys := map[int]*keyState{}
	for i := range l.evs {
		e := &l.evs[i]
		if e.inst != n {
			continue
		}
		k := keys[e.key]
		if k == nil {
			k = &keyState{lastDrop: -1}
			keys[e.key] = k
		}
		switch e.kind {
		case laneWake:
			if e.err == nil && (k.wake == nil || e.seq > k.wake.seq) {
				k.wake = e
			}
		case laneBegin:
			k.served = max(k.served, e.seq)
		case laneExit:
			if x, ok := e.exit.(lanes.Interrupted); ok && !x.Started {
				k.lastDrop = max(k.lastDrop, e.at)
			}
		}
	}
	for _, k := range keys {
		if k.wake != nil && k.wake.seq > k.served && k.lastDrop <= k.wake.call {
			w := *k.wake
			return &w
		}
	}
	return nil
}

// activation is one activation's events: begin, end, and the exit
// OnExit heard of it (nil until paired).
type activation struct{ begin, end, exit *laneEvent }

// laneInstanceEvents are one set of lanes' events, sorted by moment.
type laneInstanceEvents struct {
	n       int
	evs     []*laneEvent
	byKey   map[int][]activation // by beginning
	dropped map[int][]*laneEvent // exits of owed activations dropped before they started
	wakes   map[int][]*laneEvent // successful wakes, by return
	cancels map[int][]*laneEvent // by call
	closes  []*laneEvent
}

// checkLanes holds the events of a lanes campaign against the promises
// of package lanes, for each set of lanes:
//
//  1. at most one activation of a key runs at a time, and at most
//     MaxConcurrent in all;
//  2. each activation that ran is heard by OnExit once, after Activate
//     returned and before the key's next activation began, with the exit
//     its return makes: nil is Succeeded (even if interrupted), its
//     context's error Interrupted with the cause its context gave, any
//     other error or a panic Failed;
//  3. every successful wake is served by an activation that began after
//     its number was taken, or reported dropped (Interrupted, not
//     Started) after its call;
//  4. Cancel returns once every activation of its key that began before
//     its call has returned and been heard; one that overlaps no other
//     Cancel of its key, and returns before Close is called, reports
//     before it returns the owed activation it dropped, if a wake called
//     after the last Cancel of the key returned, and returned before
//     this one's call, was not served by then;
//  5. nothing of a set of lanes begins or is heard after its Close
//     returned, and a wake called after that is refused with ErrClosed;
//  6. left alone (the wakers stopped, before the last Close), the lanes
//     serve every wake they answered (see drain).
//
// Queue order is not checked here: it is the lane policy's, and the lane
// world of package worldmodel checks it with the step this runtime runs.
func checkLanes(evs []laneEvent, cfg LanesConfig) []string {
	var out []string
	for _, in := range groupLanes(evs) {
		out = append(out, in.checkConcurrency(cfg.MaxConcurrent)...)
		out = append(out, in.pairExits()...)
		out = append(out, in.checkServed()...)
		out = append(out, in.checkCancels()...)
		out = append(out, in.checkClose()...)
		for _, e := range in.evs {
			if e.kind == laneStall {
				out = append(out, fmt.Sprintf("lanes %d: wake %d of key %d (%v at %v) was neither served nor reported dropped %v after the wakers stopped", in.n, e.seq, e.key, e.result, e.call, drainPatience))
			}
		}
	}
	return out
}

// groupLanes splits the events by set of lanes, each sorted by moment.
func groupLanes(evs []laneEvent) []*laneInstanceEvents {
	byInst := map[int]*laneInstanceEvents{}
	for i := range evs {
		e := &evs[i]
		in := byInst[e.inst]
		if in == nil {
			in = &laneInstanceEvents{n: e.inst, byKey: map[int][]activation{}, dropped: map[int][]*laneEvent{},
				wakes: map[int][]*laneEvent{}, cancels: map[int][]*laneEvent{}}
			byInst[e.inst] = in
		}
		in.evs = append(in.evs, e)
	}
	out := make([]*laneInstanceEvents, 0, len(byInst))
	for _, in := range byInst {
		slices.SortStableFunc(in.evs, func(a, b *laneEvent) int { return cmp.Compare(a.at, b.at) })
		for _, e := range in.evs {
			switch e.kind {
			case laneBegin:
				in.byKey[e.key] = append(in.byKey[e.key], activation{begin: e})
			case laneClose:
				in.closes = append(in.closes, e)
			case laneWake:
				if e.err == nil {
					in.wakes[e.key] = append(in.wakes[e.key], e)
				}
			case laneCancel:
				in.cancels[e.key] = append(in.cancels[e.key], e)
			case laneExit:
				if x, ok := e.exit.(lanes.Interrupted); ok && !x.Started {
					in.dropped[e.key] = append(in.dropped[e.key], e)
				}
			}
		}
		for _, cs := range in.cancels {
			slices.SortStableFunc(cs, func(a, b *laneEvent) int { return cmp.Compare(a.call, b.call) })
		}
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b *laneInstanceEvents) int { return cmp.Compare(a.n, b.n) })
	return out
}

// checkConcurrency: promise 1, by a sweep over beginnings and ends.
func (in *laneInstanceEvents) checkConcurrency(maxConcurrent int) []string {
	var out []string
	running, total := map[int]int{}, 0
	for _, e := range in.evs {
		switch e.kind {
		case laneBegin:
			running[e.key]++
			total++
			if running[e.key] > 1 {
				out = append(out, fmt.Sprintf("lanes %d: %d activations of key %d at once (at %v)", in.n, running[e.key], e.key, e.at))
			}
			if total > maxConcurrent {
				out = append(out, fmt.Sprintf("lanes %d: %d activations at once, MaxConcurrent %d (at %v)", in.n, total, maxConcurrent, e.at))
			}
		case laneEnd:
			running[e.key]--
			total--
		}
	}
	return out
}

// pairExits: promise 2. It pairs each key's activations with their ends
// and exits in order, so that the later checks can use them.
func (in *laneInstanceEvents) pairExits() []string {
	ends, exits := map[int][]*laneEvent{}, map[int][]*laneEvent{}
	for _, e := range in.evs {
		switch e.kind {
		case laneEnd:
			ends[e.key] = append(ends[e.key], e)
		case laneExit:
			if x, ok := e.exit.(lanes.Interrupted); !ok || x.Started {
				exits[e.key] = append(exits[e.key], e)
			}
		}
	}
	var out []string
	for _, key := range slices.Sorted(maps.Keys(in.byKey)) {
		acts, ends, exits := in.byKey[key], ends[key], exits[key]
		if len(ends) != len(acts) || len(exits) != len(acts) {
			out = append(out, fmt.Sprintf("lanes %d: key %d had %d activations, %d returns and %d exits heard", in.n, key, len(acts), len(ends), len(exits)))
			continue
		}
		for i := range acts {
			a := &acts[i]
			a.end, a.exit = ends[i], exits[i]
			if a.exit.at < a.end.at || i+1 < len(acts) && acts[i+1].begin.at < a.exit.at {
				out = append(out, fmt.Sprintf("lanes %d: key %d's exit %v heard at %v, not between its return at %v and the key's next activation", in.n, key, a.exit.exit, a.exit.at, a.end.at))
			}
			if want := exitOf(a.end); !sameExit(a.exit.exit, want) {
				out = append(out, fmt.Sprintf("lanes %d: key %d's activation (begun at %v) returned %v, but OnExit heard %v; want %v", in.n, key, a.begin.at, returned(a.end), a.exit.exit, want))
			}
		}
	}
	return out
}

// exitOf is the exit an activation's return makes.
func exitOf(end *laneEvent) lanes.Exit {
	switch {
	case end.panicked:
		return lanes.Failed{Err: &lanes.PanicError{Value: panicValue}}
	case end.err == nil:
		return lanes.Succeeded{}
	case end.cause != nil && errors.Is(end.err, context.Canceled):
		return lanes.Interrupted{Started: true, Cause: end.cause}
	}
	return lanes.Failed{Err: end.err}
}

// sameExit compares exits by kind and error, not by stack.
func sameExit(got, want lanes.Exit) bool {
	switch w := want.(type) {
	case lanes.Succeeded:
		_, ok := got.(lanes.Succeeded)
		return ok
	case lanes.Interrupted:
		g, ok := got.(lanes.Interrupted)
		return ok && g.Started && errors.Is(g.Cause, w.Cause)
	case lanes.Failed:
		g, ok := got.(lanes.Failed)
		var pe *lanes.PanicError
		if errors.As(w.Err, &pe) {
			return ok && errors.As(g.Err, &pe) && pe.Value == panicValue
		}
		return ok && errors.Is(g.Err, w.Err)
	}
	return false
}

func returned(end *laneEvent) string {
	if end.panicked {
		return "by panicking"
	}
	return fmt.Sprint(end.err)
}

// checkServed: promise 3.
func (in *laneInstanceEvents) checkServed() []string {
	var out []string
	for key, wakes := range in.wakes {
		// An activation reads the key's number as it begins, and the
		// numbers only grow: the last to begin read the largest.
		served := int64(0)
		if acts := in.byKey[key]; len(acts) > 0 {
			served = acts[len(acts)-1].begin.seq
		}
		lastDrop := time.Duration(-1)
		if d := in.dropped[key]; len(d) > 0 {
			lastDrop = d[len(d)-1].at
		}
		for _, w := range wakes {
			if w.seq > served && lastDrop <= w.call {
				out = append(out, fmt.Sprintf("lanes %d: wake %d of key %d (%v at %v) was neither served by an activation nor reported dropped", in.n, w.seq, w.key, w.result, w.at))
			}
		}
	}
	slices.Sort(out)
	return out
}

// checkCancels: promise 4.
func (in *laneInstanceEvents) checkCancels() []string {
	var out []string
	for _, key := range slices.Sorted(maps.Keys(in.cancels)) {
		cancels, acts := in.cancels[key], in.byKey[key]
		latest := time.Duration(-1) // the latest return of the cancels called earlier
		for i, c := range cancels {
			since := latest
			overlaps := latest > c.call || i+1 < len(cancels) && cancels[i+1].call < c.at || in.closingBy(c.at)
			latest = max(latest, c.at)
			if c.err != nil {
				out = append(out, fmt.Sprintf("lanes %d: Cancel of key %d called at %v did not return within %v: %v", in.n, key, c.call, cancelPatience, c.err))
				continue
			}
			// The activations begun before the call: the exits are in
			// order (pairExits), so the last one's is the latest.
			before := sort.Search(len(acts), func(i int) bool { return acts[i].begin.at >= c.call })
			if a := lastActivation(acts[:before]); a != nil && a.exit != nil && a.exit.at > c.at {
				out = append(out, fmt.Sprintf("lanes %d: Cancel of key %d returned at %v before the activation begun at %v was heard ended (at %v)", in.n, key, c.at, a.begin.at, a.exit.at))
			}
			if overlaps {
				continue // another Cancel or a Close may have dropped what it owed
			}
			served := int64(0)
			if a := lastActivation(acts[:sort.Search(len(acts), func(i int) bool { return acts[i].begin.at >= c.at })]); a != nil {
				served = a.begin.seq
			}
			// Owed at the call: wakes after the last Cancel, which
			// dropped what was owed before it.
			w := owedAt(in.wakes[key], since, c.call, served)
			reported := slices.ContainsFunc(in.dropped[key], func(d *laneEvent) bool { return d.at > c.call && d.at < c.at })
			if w != nil && !reported {
				out = append(out, fmt.Sprintf("lanes %d: Cancel of key %d (%v to %v) dropped its owed activation (wake %d, %v at %v) without reporting it", in.n, key, c.call, c.at, w.seq, w.result, w.at))
			}
		}
	}
	return out
}

func lastActivation(acts []activation) *activation {
	if len(acts) == 0 {
		return nil
	}
	return &acts[len(acts)-1]
}

// closingBy reports whether a Close of the lanes was called before t:
// from then on, Close drops what the lanes owe.
func (in *laneInstanceEvents) closingBy(t time.Duration) bool {
	return len(in.closes) > 0 && in.closes[0].call < t
}

// owedAt returns a successful wake among wakes (sorted by return) that
// was called after since and returned before until, with a number above
// served: a wake owed at until, unless a Cancel or Close between dropped
// it; or nil.
func owedAt(wakes []*laneEvent, since, until time.Duration, served int64) *laneEvent {
	from := sort.Search(len(wakes), func(i int) bool { return wakes[i].at > since })
	for _, w := range wakes[from:] {
		if w.at >= until {
			break
		}
		if w.call > since && w.seq > served {
			return w
		}
	}
	return nil
}

// checkClose: promise 5.
func (in *laneInstanceEvents) checkClose() []string {
	if len(in.closes) == 0 {
		return []string{fmt.Sprintf("lanes %d: never closed", in.n)}
	}
	closed := in.closes[0]
	var out []string
	if closed.err != nil {
		out = append(out, fmt.Sprintf("lanes %d: Close returned %v", in.n, closed.err))
	}
	for _, e := range in.evs {
		switch {
		case (e.kind == laneBegin || e.kind == laneExit) && e.at > closed.at:
			out = append(out, fmt.Sprintf("lanes %d: key %d's %s at %v, after Close returned at %v", in.n, e.key, map[laneEventKind]string{laneBegin: "activation began", laneExit: "exit was heard"}[e.kind], e.at, closed.at))
		case e.kind == laneWake && e.call > closed.at && !errors.Is(e.err, lanes.ErrClosed):
			out = append(out, fmt.Sprintf("lanes %d: wake of key %d called at %v, after Close returned at %v, answered %v, %v", in.n, e.key, e.call, closed.at, e.result, e.err))
		}
	}
	return out
}
