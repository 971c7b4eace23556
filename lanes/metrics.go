package lanes

import "time"

// Metrics receives the lanes' metrics, as the metrics of client-go
// workqueue's MetricsProvider do: each method feeds one metric of the
// library of your choice (a Prometheus gauge's Add, a counter's Inc, a
// histogram's Observe; expvar's Int and Float). It hears no keys, so that
// no metric grows with the keys ever woken: Hooks hear them.
//
// The lanes call its methods without their lock held, from the goroutines
// of Wake, Cancel, Close and the activations, concurrently: they must be
// safe for that. A slow method holds up what follows it on its goroutine
// (a Wake's return; an activation's end, and so its slot's passing on),
// never the lanes' lock. It must not call Cancel or Close of these lanes,
// nor wait for them: it may run on an activation's goroutine, which they
// wait for.
//
// The gauges come as changes, which add up in any order: their sum is the
// value once the steps under way have reported, and a reading in between
// may be off by those steps. The longest running activation is not among
// them, as it grows while nothing happens: read it from
// Lanes.LongestRunning when you scrape.
type Metrics interface {
	// AddDepth adds delta to the depth: the queue places in use, which
	// are the lanes waiting for a slot and the follow-ups owed by running
	// lanes, as MaxQueued counts them.
	AddDepth(delta int)
	// AddRunning adds delta to the activations that hold a slot, from
	// their start until their OnExit has returned.
	AddRunning(delta int)
	// Woke counts a Wake by what it returned: Started, Queued or
	// Coalesced with a nil error, or ErrQueueFull or ErrClosed.
	Woke(r WakeResult, err error)
	// Waited observes how long a lane waited in the queue before its
	// activation started: 0 for one that started without waiting, so
	// that every activation is observed once.
	Waited(d time.Duration)
	// Ran observes how long an activation ran: from taking its slot
	// until Activate returned.
	Ran(d time.Duration)
	// Dropped counts an owed activation that Cancel or Close dropped
	// before it started.
	Dropped()
	// TimedOut counts an activation that TurnTimeout interrupted, once
	// its Activate has returned.
	TimedOut()
}

// LongestRunning returns how long the activation that has held its slot
// longest has held it so far, or 0 if none does: client-go workqueue's
// longest running processor, for a gauge that your metrics library reads
// when it scrapes (a Prometheus GaugeFunc, an expvar.Func). The lanes
// follow their running activations for it only with Config.Metrics set:
// without, LongestRunning returns 0.
func (l *Lanes[K]) LongestRunning() time.Duration {
	l.mu.Lock()
	ln := l.runs.head
	var began time.Duration
	if ln != nil {
		began = ln.ext.began
	}
	l.mu.Unlock()
	if ln == nil {
		return 0
	}
	// Read after began, so never less.
	return l.cfg.Clock.Monotonic() - began
}

// observeEnd tells the metrics how long an activation ran and whether
// TurnTimeout interrupted it. Its context's cause is final once Activate
// has returned: a turn timeout no longer applies, and the first cause
// stands.
func (l *Lanes[K]) observeEnd(ctx *activationContext, ran time.Duration) {
	l.cfg.Metrics.Ran(ran)
	if ctx.cancelCause() == ErrTurnTimeout {
		l.cfg.Metrics.TimedOut()
	}
}

// runList is the lanes whose activation holds a slot, linked through the
// lanes, in the order the activations took their slots. Each reads its
// start time as it joins, under Lanes.mu, so the head has run longest.
type runList[K comparable] struct {
	head, tail *lane[K]
}

func (r *runList[K]) push(ln *lane[K]) {
	e := ln.extra()
	e.older, e.newer = r.tail, nil
	if r.tail != nil {
		r.tail.ext.newer = ln
	} else {
		r.head = ln
	}
	r.tail = ln
}

func (r *runList[K]) remove(ln *lane[K]) {
	e := ln.ext
	if e.older != nil {
		e.older.ext.newer = e.newer
	} else {
		r.head = e.newer
	}
	if e.newer != nil {
		e.newer.ext.older = e.older
	} else {
		r.tail = e.older
	}
	e.older, e.newer = nil, nil
}
