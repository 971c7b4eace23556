package lanes

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// activation is one run of Activate for a key.
type activation struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	ended  chan struct{} // closed once the lane has stepped past it
}

// startLocked takes a slot and starts an activation of key.
func (l *Lanes[K]) startLocked(ln *lane[K]) {
	ctx, cancel := context.WithCancelCause(l.base)
	run := &activation{ctx: ctx, cancel: cancel, ended: make(chan struct{})}
	ln.run = run
	l.running++
	l.activations.Add(1)
	go l.runActivation(ln, run)
}

// runActivation runs Activate, reports its exit, and only then lets the
// lane move on and its slot pass to another key.
func (l *Lanes[K]) runActivation(ln *lane[K], run *activation) {
	key := ln.key
	defer l.activations.Done()
	if l.cfg.TurnTimeout > 0 {
		timer := l.cfg.Clock.AfterFunc(l.cfg.TurnTimeout, func() { l.timeout(ln, run) })
		defer timer.Stop()
	}
	began := l.hookTime()
	exit := l.activate(key, run.ctx)
	run.cancel(context.Canceled) // release the context's resources
	l.cfg.Hooks.ended(key, l.hookTime()-began, exit)
	// Deferred, so that the lane moves on even if OnExit calls
	// runtime.Goexit, which no recover stops.
	defer l.activationEnded(ln, run)
	l.onExit(key, exit)
}

// activationEnded lets the lane move on, and its slot pass, once
// Activate returned and OnExit ran.
func (l *Lanes[K]) activationEnded(ln *lane[K], run *activation) {
	var fx effects[K]
	l.mu.Lock()
	l.stepLocked(ln, trActivationEnded, &fx)
	l.mu.Unlock()
	close(run.ended)
	fx.run(l)
}

// hookTime reads the clock only when a hook will hear a duration.
func (l *Lanes[K]) hookTime() time.Duration {
	if l.cfg.Hooks.Ended == nil && l.cfg.Hooks.Waited == nil {
		return 0
	}
	return l.cfg.Clock.Monotonic()
}

// timeout interrupts run if it is still the lane's activation.
func (l *Lanes[K]) timeout(ln *lane[K], run *activation) {
	var fx effects[K]
	l.mu.Lock()
	if ln.run == run {
		l.stepLocked(ln, trTimeout, &fx)
	}
	l.mu.Unlock()
	fx.run(l)
}

// activate calls Activate and classifies how it ended. Activate runs in a
// goroutine of its own so that a runtime.Goexit in it ends only that
// goroutine; a panic or Goexit is recovered into Failed, with the stack.
func (l *Lanes[K]) activate(key K, ctx context.Context) Exit {
	done := make(chan Exit, 1)
	go func() {
		returned := false
		defer func() {
			if returned {
				return
			}
			err := ErrGoexit
			if v := recover(); v != nil {
				err = &PanicError{Value: v}
			}
			done <- Failed{Err: err, Stack: debug.Stack()}
		}()
		err := l.cfg.Activate(ctx, key)
		returned = true
		done <- classify(ctx, err)
	}()
	return <-done
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
