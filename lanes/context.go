package lanes

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// activationContext is the context an activation runs with: a context of
// the lanes' values, cancelled with a cause when the activation is
// interrupted, and with context.Canceled when it has returned.
//
// It costs one small allocation. The standard library's cancellable
// context behind it (inner) is made only when something asks for what
// needs one: its Done channel, or a value the lanes' context lacks, which
// is how context.Cause and the contexts derived from it find the
// cancellable one. An activation that never looks at its context, or only
// at Err and its values, ends without one.
type activationContext struct {
	base  context.Context // the lanes' values; never done
	inner atomic.Pointer[cancellable]
	done  atomic.Bool // cancelled: Err reads it without the lock

	mu    sync.Mutex // orders making inner against cancelling
	cause error      // why it was cancelled, once done
}

// cancellable is inner: a context of the standard library and its cancel.
type cancellable struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func newActivationContext(base context.Context) *activationContext {
	return &activationContext{base: base}
}

func (c *activationContext) Deadline() (time.Time, bool) { return c.base.Deadline() }

func (c *activationContext) Done() <-chan struct{} { return c.cancellable().Done() }

func (c *activationContext) Err() error {
	if !c.done.Load() {
		return nil
	}
	// A cancel under way has closed Done once it lets the lock go: Err
	// says Canceled only where Done is closed.
	c.mu.Lock()
	defer c.mu.Unlock()
	return context.Canceled
}

// Value returns the lanes' value for key; for a key they lack, it asks
// the cancellable context, which answers the standard library's own
// lookups (context.Cause, and the contexts derived from this one, find
// their cancellable parent so).
func (c *activationContext) Value(key any) any {
	if v := c.base.Value(key); v != nil {
		return v
	}
	return c.cancellable().Value(key)
}

func (c *activationContext) String() string { return "lanes activation context" }

// cancellable returns inner, making it first if need be, cancelled at
// once with the cause if the activation was cancelled before.
func (c *activationContext) cancellable() context.Context {
	if in := c.inner.Load(); in != nil {
		return in.ctx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if in := c.inner.Load(); in != nil {
		return in.ctx
	}
	ctx, cancel := context.WithCancelCause(c.base)
	if c.done.Load() {
		cancel(c.cause)
	}
	c.inner.Store(&cancellable{ctx, cancel})
	return ctx
}

// cancel cancels the context with cause, unless it was cancelled before:
// the first cause stands, as with context.WithCancelCause.
func (c *activationContext) cancel(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done.Load() {
		return
	}
	c.cause = cause
	c.done.Store(true)
	if in := c.inner.Load(); in != nil {
		in.cancel(cause)
	}
}

// cancelCause returns why the context was cancelled, or nil: what
// context.Cause returns, without making the cancellable context.
func (c *activationContext) cancelCause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cause
}
