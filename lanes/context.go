package lanes

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
)

// activationContext is the context an activation runs with: New's ctx's
// values without its cancellation or deadline, cancelled with a cause
// when the activation is interrupted, and with context.Canceled once it
// has returned.
//
// It costs one small allocation. The standard library's cancellable
// context behind it (inner) is made only when something asks for what
// needs one: the Done channel, or the standard library's own lookup of
// its cancellable context (cancelCtxKey), through which context.Cause
// and the contexts derived from this one find inner. An activation that
// reads only Err and values makes none, and a value costs no allocation.
type activationContext struct {
	values context.Context // New's ctx: asked for values, never for its cancellation
	made   atomic.Bool     // inner and cancelInner are set, never to change again
	done   atomic.Bool     // cancelled: Err reads it without the lock

	mu          sync.Mutex // orders making inner against cancelling
	inner       context.Context
	cancelInner context.CancelCauseFunc
	cause       error // why it was cancelled, once done
}

func newActivationContext(values context.Context) *activationContext {
	return &activationContext{values: values}
}

func (c *activationContext) Deadline() (time.Time, bool) { return time.Time{}, false }

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

// Value returns New's ctx's value for key, except for the standard
// library's lookup of the cancellable context, which inner answers.
func (c *activationContext) Value(key any) any {
	if cancelCtxKey == nil || key == cancelCtxKey {
		return c.cancellable().Value(key)
	}
	return c.values.Value(key)
}

// String names the context as the standard library would have named the
// cancellable context of New's ctx without its cancellation.
func (c *activationContext) String() string {
	if s, ok := c.values.(fmt.Stringer); ok {
		return s.String() + ".WithoutCancel.WithCancel"
	}
	return reflect.TypeOf(c.values).String() + ".WithoutCancel.WithCancel"
}

// cancellable returns inner, making it first if need be, cancelled at
// once with the cause if the activation was cancelled before.
func (c *activationContext) cancellable() context.Context {
	if c.made.Load() {
		return c.inner
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.made.Load() {
		return c.inner
	}
	c.inner, c.cancelInner = context.WithCancelCause((*valuesOnly)(c))
	if c.done.Load() {
		c.cancelInner(c.cause)
	}
	c.made.Store(true)
	return c.inner
}

// cancel cancels the context with cause (nil meaning context.Canceled, as
// for a context.CancelCauseFunc), unless it was cancelled before: the
// first cause stands.
func (c *activationContext) cancel(cause error) {
	if cause == nil {
		cause = context.Canceled
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done.Load() {
		return
	}
	c.cause = cause
	c.done.Store(true)
	if c.made.Load() {
		c.cancelInner(cause)
	}
}

// cancelCause returns why the context was cancelled, or nil: what
// context.Cause returns, without making inner.
func (c *activationContext) cancelCause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cause
}

// valuesOnly is an activation context as inner's parent: New's ctx's
// values, never done, and no cancellable context of its own to find, so
// that inner answers for itself. A conversion of the activation context,
// it costs no allocation.
type valuesOnly activationContext

func (*valuesOnly) Deadline() (time.Time, bool) { return time.Time{}, false }
func (*valuesOnly) Done() <-chan struct{}       { return nil }
func (*valuesOnly) Err() error                  { return nil }

func (v *valuesOnly) Value(key any) any {
	if key == cancelCtxKey {
		return nil
	}
	return v.values.Value(key)
}

// closedDone is keyProbe's Done channel. It is declared before
// cancelCtxKey, as the package's variables are initialised in the order
// of declaration where no reference orders them, and cancelCtxKey reaches
// it only through an interface.
var closedDone = func() chan struct{} {
	done := make(chan struct{})
	close(done)
	return done
}()

// cancelCtxKey is the key through which the standard library finds a
// context's cancellable context (context.Cause asks a context's Value for
// it), learnt once from context.Cause itself; nil if Cause no longer asks,
// and then every lookup goes to inner, which is correct but makes inner.
var cancelCtxKey = func() any {
	var p keyProbe
	_ = context.Cause(&p)
	return p.key
}()

// keyProbe is a cancelled context that records the first key its Value
// is asked for.
type keyProbe struct{ key any }

func (*keyProbe) Deadline() (time.Time, bool) { return time.Time{}, false }
func (*keyProbe) Done() <-chan struct{}       { return closedDone }
func (*keyProbe) Err() error                  { return context.Canceled }

func (p *keyProbe) Value(key any) any {
	if p.key == nil {
		p.key = key
	}
	return nil
}
