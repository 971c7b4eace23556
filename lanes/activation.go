package lanes

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/rivus/collab/policy"
)

// activation is the running activation of a lane, kept in the lane itself
// so that starting one allocates no more than its context. What only some
// configurations need of it is in the lane's extra (laneExtra).
type activation struct {
	// ctx is the activation's context, nil while no activation holds a
	// slot. It also names the activation: each context serves one
	// activation only (runner.makeSpare makes a new one for each), so a
	// goroutine that keeps it across a release of the lock knows, by
	// comparing it with ctx, whether its activation is still the lane's.
	ctx *activationContext
	// Its flags, returned and left, are the lane's: beside the lane's
	// own, they spare the lane a word.
}

// held says whether an activation holds the lane's slot.
func (a *activation) held() bool { return a.ctx != nil }

// is says whether run is the activation that holds the lane's slot.
func (a *activation) is(run *activationContext) bool { return a.ctx != nil && a.ctx == run }

// laneExtra is what a lane needs only with the clock read (Lanes.timed),
// with Config.Metrics, or while Cancel waits for its activation: made the
// first time it is needed and kept with the lane, also while the lane
// waits for reuse, so that a lane without is smaller (and the collector's
// work with many keys less).
type laneExtra[K comparable] struct {
	queuedAt time.Duration // when the lane entered the queue (Lanes.timed)
	began    time.Duration // when run took its slot (Lanes.timed)
	waited   time.Duration // how long the lane waited in the queue for run (Lanes.timed); set as it leaves the queue
	ended    chan struct{} // made when Cancel waits for run; closed once the lane has stepped past it
	older    *lane[K]      // neighbours in Lanes.runs, while run.held() (Metrics)
	newer    *lane[K]
}

// extra returns ln's extra, making it first if need be.
func (ln *lane[K]) extra() *laneExtra[K] {
	if ln.ext == nil {
		ln.ext = new(laneExtra[K])
	}
	return ln.ext
}

// endedLocked returns the channel closed when ln's activation ends.
func (ln *lane[K]) endedLocked() chan struct{} {
	e := ln.extra()
	if e.ended == nil {
		e.ended = make(chan struct{})
	}
	return e.ended
}

// startLocked takes a slot for an activation of ln; the step's caller
// gets it a goroutine once the lock is released (l.pending), and
// l.activations counts it when the lock is (unlock).
func (l *Lanes[K]) startLocked(ln *lane[K]) {
	ctx := l.spare
	if ctx != nil {
		l.spare = nil
	} else {
		ctx = newActivationContext(l.values)
	}
	ln.run.ctx = ctx
	if l.timed {
		ln.extra().began = l.hookTime()
		if l.cfg.Metrics != nil {
			l.runs.push(ln)
		}
	}
	l.running++
	l.pending.uncounted++
	l.pending.starts.push(ln)
	l.pendingSet = true
	// An activation often wakes its own key again as it runs. (A policy
	// may start a lane it forgot, which a wake of its key must not find.)
	if ln.mapped {
		l.recent = ln
	}
}

// lock takes l.mu for a wake or an activation's end, the lanes' busiest
// callers. While another goroutine holds it, the caller first steps aside
// (runtime.Gosched) and tries again, twice, before it waits in l.mu:
// another goroutine of the program, often an activation with work to do
// outside the lock, runs meanwhile, where a waiter in sync.Mutex would
// spin, or sleep and need a wake-up from the holder's Unlock. The holder
// is seldom held up long (a step and its grants, no I/O), so a second try
// mostly succeeds. On two cores this cut a processed item's time by 5 to
// 15% (bench/, with and without, interleaved), where sync.Mutex's
// spinning, sleeping and waking had taken a quarter of the CPU. A step
// aside goes through the scheduler's global run queue, whose lock is the
// cost on many cores; lockYields 0 makes lock plain sync.Mutex.Lock.
func (l *Lanes[K]) lock() {
	for range lockYields {
		if l.mu.TryLock() {
			return
		}
		runtime.Gosched()
	}
	l.mu.Lock()
}

// lockYields is how many times lock steps aside before it waits.
const lockYields = 2

// unlock counts in l.activations the activations that the steps under
// the lock started, which Close waits for, and releases the lock. The
// count comes before the release, so that a Close that steps after these
// steps waits for their activations.
func (l *Lanes[K]) unlock(fx *effects[K]) {
	if fx.uncounted > 0 {
		l.activations.Add(fx.uncounted)
		fx.uncounted = 0
	}
	l.mu.Unlock()
}

// runActivations runs ln's activation, then, in the same goroutine, an
// activation that its end started: a new goroutine for each costs more
// than a short activation's work. The goroutine holds one count of
// l.activations from its first activation's start to its last one's end:
// an activation it runs next takes over the count of the one before.
func (l *Lanes[K]) runActivations(ln *lane[K]) {
	var own runner
	for ln != nil {
		ln = l.runActivation(ln, &own)
	}
}

// runner is what an activation goroutine keeps from one activation to
// the next: the context of the activation that its next end is likely to
// start (an end that started one is likely followed by another), made
// before the end takes the lock so that the lock is not held for the
// allocation; and contexts made in batches, contextBatch to an
// allocation, for those.
type runner struct {
	spare *activationContext
	batch []activationContext
}

// contextBatch is how many contexts a runner makes at once. A context
// kept after its activation keeps its batch's memory, a few hundred bytes.
const contextBatch = 8

// makeSpare makes the spare context, if the runner has none.
func (r *runner) makeSpare(values *context.Context) {
	if r.spare != nil {
		return
	}
	if len(r.batch) == 0 {
		r.batch = make([]activationContext, contextBatch)
	}
	r.spare, r.batch = &r.batch[0], r.batch[1:]
	r.spare.values = values
}

// runActivation runs Activate, reports its exit, and only then lets the
// lane move on and its slot pass to another key; it returns an activation
// for this goroutine to run next, if the lane's end started one. The
// report runs in a deferred function, so that a panic or runtime.Goexit in
// Activate (which no recover stops) is reported as Failed, with its stack,
// all the same.
func (l *Lanes[K]) runActivation(ln *lane[K], own *runner) (next *lane[K]) {
	defer func() {
		if next == nil {
			l.activations.Done()
		}
	}()
	// Nothing else writes these while the activation runs: its own end
	// step clears them.
	key, ctx := ln.key, ln.run.ctx
	var began time.Duration
	if l.timed { // startLocked made ln's extra
		began = ln.ext.began
		if l.cfg.Metrics != nil {
			l.cfg.Metrics.Waited(ln.ext.waited)
		}
	}
	if l.cfg.TurnTimeout > 0 {
		timer := l.cfg.Clock.AfterFunc(l.cfg.TurnTimeout, func() { l.timeout(ln, ctx) })
		defer timer.Stop()
	}
	var (
		err      error
		returned bool
	)
	defer func() {
		// From here the turn timeout no longer applies: OnExit may
		// outlast it, and must not hear of a timeout of an activation
		// that returned.
		if l.cfg.TurnTimeout > 0 || monitoring {
			l.mu.Lock()
			ln.returned = true
			if monitoring {
				l.leaveLocked(ln)
			}
			l.mu.Unlock()
		}
		var exit Exit
		goexit := false
		if returned {
			exit = classify(ctx, err)
		} else {
			failure := ErrGoexit
			if v := recover(); v != nil {
				failure = &PanicError{Value: v}
			} else {
				goexit = true
			}
			exit = Failed{Err: failure, Stack: debug.Stack()}
		}
		ctx.cancelWith(canceledCode) // the activation is over
		if l.timed {
			ran := l.hookTime() - began
			l.cfg.Hooks.ended(key, ran, exit)
			if l.cfg.Metrics != nil {
				l.observeEnd(ctx, ran)
			}
		} else if l.cfg.Hooks.Panicked != nil {
			l.cfg.Hooks.ended(key, 0, exit)
		}
		next = l.finish(ln, ctx, exit, goexit, own)
	}()
	if monitoring {
		l.mu.Lock()
		l.enterLocked(ln, ctx)
		l.mu.Unlock()
	}
	err = l.cfg.Activate(ctx, key)
	returned = true
	return nil // set by the deferred report
}

// finish calls OnExit, then lets the lane move on. Of the activations that
// the step starts, it returns one for the calling goroutine to run and
// gives the others goroutines of their own; all of them when the calling
// goroutine is ending by runtime.Goexit (dying is true, or OnExit calls
// it), which even a deferred step survives. A returned activation takes
// over the count in l.activations of the one that ended. The step starts
// its first activation with own's spare context, if it has one.
func (l *Lanes[K]) finish(ln *lane[K], run *activationContext, exit Exit, dying bool, own *runner) (next *lane[K]) {
	key := ln.key
	returned := false
	defer func() {
		var fx effects[K]
		l.lock()
		if monitoring {
			l.endingLocked(ln, run)
		}
		l.spare = own.spare
		// The step may forget ln, and a later wake reuse it.
		var ended chan struct{}
		if ln.ext != nil {
			ended = ln.ext.ended
		}
		l.stepLocked(ln, policy.LaneActivationEnded, &fx)
		own.spare, l.spare = l.spare, nil
		if returned && !dying {
			if next = fx.starts.pop(); next != nil {
				fx.uncounted--
			}
		}
		l.unlock(&fx)
		if ended != nil {
			close(ended)
		}
		fx.run(l)
		if next != nil {
			own.makeSpare(l.values)
		}
	}()
	if !l.quietExit {
		l.onExit(key, exit)
	}
	returned = true
	return nil // set by the deferred step
}

// hookTime reads the clock only when a hook or the metrics will hear a
// duration.
func (l *Lanes[K]) hookTime() time.Duration {
	if !l.timed {
		return 0
	}
	return l.cfg.Clock.Monotonic()
}

// timeout interrupts activation run of ln if it is still the lane's
// activation and has not returned.
func (l *Lanes[K]) timeout(ln *lane[K], run *activationContext) {
	var fx effects[K]
	l.mu.Lock()
	if ln.run.is(run) && !ln.returned {
		if monitoring {
			l.timingOutLocked(ln)
		}
		l.stepLocked(ln, policy.LaneTimeout, &fx)
	}
	l.unlock(&fx)
	fx.run(l)
}

// classify: nil is success even if an interruption came late; an error
// that is the interruption's own is Interrupted; any other is Failed.
func classify(ctx *activationContext, err error) Exit {
	if err == nil {
		return Succeeded{}
	}
	if cause := ctx.cancelCause(); cause != nil && (errors.Is(err, context.Canceled) || errors.Is(err, cause)) {
		return Interrupted{Started: true, Cause: cause}
	}
	return Failed{Err: err}
}

// onExit calls OnExit, logging a panic or runtime.Goexit in it as a
// warning.
func (l *Lanes[K]) onExit(key K, exit Exit) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if v := recover(); v != nil {
			l.cfg.Logger.Warn("lanes: OnExit panicked", "key", fmt.Sprint(key), "panic", v, "stack", string(debug.Stack()))
			return
		}
		l.cfg.Logger.Warn("lanes: OnExit called runtime.Goexit", "key", fmt.Sprint(key), "stack", string(debug.Stack()))
	}()
	l.cfg.OnExit(key, exit)
	returned = true
}
