package lanes

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/rivus/collab/policy"
)

// activation is one run of Activate for a key.
type activation struct {
	ctx      context.Context
	cancel   context.CancelCauseFunc
	ended    chan struct{} // closed once the lane has stepped past it
	returned bool          // Activate has returned; under Lanes.mu
}

// startLocked takes a slot for an activation of ln; fx gets it a
// goroutine once the lock is released.
func (l *Lanes[K]) startLocked(ln *lane[K], fx *effects[K]) {
	ctx, cancel := context.WithCancelCause(l.base)
	run := &activation{ctx: ctx, cancel: cancel, ended: make(chan struct{})}
	ln.run = run
	l.running++
	l.activations.Add(1)
	fx.starts = append(fx.starts, start[K]{ln, run})
}

// runActivations runs ln's activation, then, in the same goroutine, an
// activation that its end started: a new goroutine for each costs more
// than a short activation's work.
func (l *Lanes[K]) runActivations(ln *lane[K], run *activation) {
	for ln != nil {
		ln, run = l.runActivation(ln, run)
	}
}

// runActivation runs Activate, reports its exit, and only then lets the
// lane move on and its slot pass to another key; it returns an activation
// for this goroutine to run next, if the lane's end started one. The
// report runs in a deferred function, so that a panic or runtime.Goexit in
// Activate (which no recover stops) is reported as Failed, with its stack,
// all the same.
func (l *Lanes[K]) runActivation(ln *lane[K], run *activation) (next *lane[K], nextRun *activation) {
	defer l.activations.Done()
	key := ln.key
	if l.cfg.TurnTimeout > 0 {
		timer := l.cfg.Clock.AfterFunc(l.cfg.TurnTimeout, func() { l.timeout(ln, run) })
		defer timer.Stop()
	}
	began := l.hookTime()
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
			run.returned = true
			if monitoring {
				l.leaveLocked(ln)
			}
			l.mu.Unlock()
		}
		var exit Exit
		goexit := false
		if returned {
			exit = classify(run.ctx, err)
		} else {
			failure := ErrGoexit
			if v := recover(); v != nil {
				failure = &PanicError{Value: v}
			} else {
				goexit = true
			}
			exit = Failed{Err: failure, Stack: debug.Stack()}
		}
		run.cancel(context.Canceled) // release the context's resources
		l.cfg.Hooks.ended(key, l.hookTime()-began, exit)
		next, nextRun = l.finish(ln, run, exit, goexit)
	}()
	if monitoring {
		l.mu.Lock()
		l.enterLocked(ln, run)
		l.mu.Unlock()
	}
	err = l.cfg.Activate(run.ctx, key)
	returned = true
	return nil, nil // set by the deferred report
}

// finish calls OnExit, then lets the lane move on. Of the activations that
// the step starts, it returns one for the calling goroutine to run and
// gives the others goroutines of their own; all of them when the calling
// goroutine is ending by runtime.Goexit (dying is true, or OnExit calls
// it), which even a deferred step survives.
func (l *Lanes[K]) finish(ln *lane[K], run *activation, exit Exit, dying bool) (next *lane[K], nextRun *activation) {
	returned := false
	defer func() {
		var fx effects[K]
		l.mu.Lock()
		if monitoring {
			l.endingLocked(ln, run)
		}
		l.stepLocked(ln, policy.LaneActivationEnded, &fx)
		l.mu.Unlock()
		close(run.ended)
		if returned && !dying && len(fx.starts) > 0 {
			next, nextRun = fx.starts[0].ln, fx.starts[0].run
			fx.starts = fx.starts[1:]
		}
		fx.run(l)
	}()
	l.onExit(ln.key, exit)
	returned = true
	return nil, nil // set by the deferred step
}

// hookTime reads the clock only when a hook will hear a duration.
func (l *Lanes[K]) hookTime() time.Duration {
	if l.cfg.Hooks.Ended == nil && l.cfg.Hooks.Waited == nil {
		return 0
	}
	return l.cfg.Clock.Monotonic()
}

// timeout interrupts run if it is still the lane's activation and has not
// returned.
func (l *Lanes[K]) timeout(ln *lane[K], run *activation) {
	var fx effects[K]
	l.mu.Lock()
	if ln.run == run && !run.returned {
		l.stepLocked(ln, policy.LaneTimeout, &fx)
	}
	l.mu.Unlock()
	fx.run(l)
}

// classify: nil is success even if an interruption came late; an error
// that is the interruption's own is Interrupted; any other is Failed.
func classify(ctx context.Context, err error) Exit {
	if err == nil {
		return Succeeded{}
	}
	if cause := context.Cause(ctx); cause != nil && (errors.Is(err, context.Canceled) || errors.Is(err, cause)) {
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
