package lanes

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/rivus/collab/policy"
)

// activation is the running activation of a lane, kept in the lane itself
// so that starting one allocates no more than its context.
type activation struct {
	ctx      *activationContext // nil while no activation holds a slot
	seq      uint64             // activations started in the lane struct so far: names this one
	ended    chan struct{}      // made when Cancel waits; closed once the lane has stepped past it
	returned bool               // Activate has returned
	left     bool               // the contract monitor saw Activate return (monitored builds only)
	began    time.Duration      // when it took its slot (Lanes.timed)
	waited   time.Duration      // how long its lane waited in the queue for it (Lanes.timed)
}

// held says whether an activation holds the lane's slot.
func (a *activation) held() bool { return a.ctx != nil }

// endedLocked returns the channel closed when the activation ends.
func (a *activation) endedLocked() chan struct{} {
	if a.ended == nil {
		a.ended = make(chan struct{})
	}
	return a.ended
}

// startLocked takes a slot for an activation of ln; fx gets it a
// goroutine once the lock is released.
func (l *Lanes[K]) startLocked(ln *lane[K], fx *effects[K]) {
	ln.run = activation{ctx: newActivationContext(l.values), seq: ln.run.seq + 1, began: l.hookTime(), waited: ln.waited}
	ln.waited = 0
	if l.cfg.Metrics != nil {
		l.runs.push(ln)
	}
	l.running++
	l.activations.Add(1)
	fx.starts.push(ln)
}

// runActivations runs ln's activation, then, in the same goroutine, an
// activation that its end started: a new goroutine for each costs more
// than a short activation's work.
func (l *Lanes[K]) runActivations(ln *lane[K]) {
	for ln != nil {
		ln = l.runActivation(ln)
	}
}

// runActivation runs Activate, reports its exit, and only then lets the
// lane move on and its slot pass to another key; it returns an activation
// for this goroutine to run next, if the lane's end started one. The
// report runs in a deferred function, so that a panic or runtime.Goexit in
// Activate (which no recover stops) is reported as Failed, with its stack,
// all the same.
func (l *Lanes[K]) runActivation(ln *lane[K]) (next *lane[K]) {
	defer l.activations.Done()
	// Nothing else writes these while the activation runs: its own end
	// step clears them.
	key, ctx, seq, began := ln.key, ln.run.ctx, ln.run.seq, ln.run.began
	if l.cfg.Metrics != nil {
		l.cfg.Metrics.Waited(ln.run.waited)
	}
	if l.cfg.TurnTimeout > 0 {
		timer := l.cfg.Clock.AfterFunc(l.cfg.TurnTimeout, func() { l.timeout(ln, seq) })
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
			ln.run.returned = true
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
		ctx.cancel(context.Canceled) // the activation is over
		ran := l.hookTime() - began
		l.cfg.Hooks.ended(key, ran, exit)
		if l.cfg.Metrics != nil {
			l.observeEnd(ctx, ran)
		}
		next = l.finish(ln, seq, exit, goexit)
	}()
	if monitoring {
		l.mu.Lock()
		l.enterLocked(ln, seq)
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
// it), which even a deferred step survives.
func (l *Lanes[K]) finish(ln *lane[K], seq uint64, exit Exit, dying bool) (next *lane[K]) {
	key := ln.key
	returned := false
	defer func() {
		var fx effects[K]
		l.mu.Lock()
		if monitoring {
			l.endingLocked(ln, seq)
		}
		// The step may forget ln, and a later wake reuse it.
		ended := ln.run.ended
		l.stepLocked(ln, policy.LaneActivationEnded, &fx)
		l.mu.Unlock()
		if ended != nil {
			close(ended)
		}
		if returned && !dying {
			next = fx.starts.pop()
		}
		fx.run(l)
	}()
	l.onExit(key, exit)
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

// timeout interrupts activation seq of ln if it is still the lane's
// activation and has not returned.
func (l *Lanes[K]) timeout(ln *lane[K], seq uint64) {
	var fx effects[K]
	l.mu.Lock()
	if ln.run.held() && ln.run.seq == seq && !ln.run.returned {
		if monitoring {
			l.timingOutLocked(ln)
		}
		l.stepLocked(ln, policy.LaneTimeout, &fx)
	}
	l.mu.Unlock()
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
