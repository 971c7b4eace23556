package lanes

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"
)

// activationContext is the context an activation runs with: New's ctx's
// values without its cancellation or deadline, cancelled with a cause
// when the activation is interrupted, and with context.Canceled once it
// has returned.
//
// It costs one small allocation (24 bytes). The standard library's
// cancellable context behind it (inner) is made only when something asks
// for what needs one: the Done channel, or the standard library's own
// lookup of its cancellable context (cancelCtxKey), through which
// context.Cause and the contexts derived from this one find inner. An
// activation that reads only Err and values makes none, and a value costs
// no allocation.
//
// It takes no lock of its own: the cause is a small code (causes) in an
// atomic word, set once, and inner an atomic pointer, set once. Whoever
// sees both, inner made and a cause set, cancels inner with that cause
// before going on (cancelling twice changes nothing): the cancel after it
// set the cause, the maker of inner after it installed it, and Err and
// Done after they read them. So once cancel has returned, or Err has said
// Canceled, Done is closed.
type activationContext struct {
	values *context.Context // New's ctx (Lanes.values): asked for values, never for its cancellation
	inner  atomic.Pointer[innerContext]
	cause  atomic.Uint32 // the cause's code in causes; 0 while live
}

// innerContext is the standard library's cancellable context behind an
// activation's context, and its cancel function.
type innerContext struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// causes are the causes an activation's context can be cancelled with,
// indexed by their code; 0 is no cause (live).
var causes = [...]error{nil, context.Canceled, ErrCancelled, ErrTurnTimeout, ErrClosed}

// causeCode returns cause's code. The lanes cancel with the causes above
// only: another is a bug of this package.
func causeCode(cause error) uint32 {
	for i := 1; i < len(causes); i++ {
		if causes[i] == cause {
			return uint32(i)
		}
	}
	panic(fmt.Sprintf("lanes: an activation's context cancelled with %v, not one of the lanes' causes", cause))
}

func newActivationContext(values *context.Context) *activationContext {
	return &activationContext{values: values}
}

func (c *activationContext) Deadline() (time.Time, bool) { return time.Time{}, false }

func (c *activationContext) Done() <-chan struct{} { return c.cancellable().Done() }

func (c *activationContext) Err() error {
	code := c.cause.Load()
	if code == 0 {
		return nil
	}
	if in := c.inner.Load(); in != nil {
		in.cancel(causes[code]) // a cancel may be under way: Done closed first
	}
	return context.Canceled
}

// Value returns New's ctx's value for key, except for the standard
// library's lookup of the cancellable context, which inner answers.
func (c *activationContext) Value(key any) any {
	if cancelCtxKey == nil || key == cancelCtxKey {
		return c.cancellable().Value(key)
	}
	return (*c.values).Value(key)
}

// String names the context as the standard library would have named the
// cancellable context of New's ctx without its cancellation.
func (c *activationContext) String() string {
	if s, ok := (*c.values).(fmt.Stringer); ok {
		return s.String() + ".WithoutCancel.WithCancel"
	}
	return reflect.TypeOf(*c.values).String() + ".WithoutCancel.WithCancel"
}

// isMade says whether inner is made.
func (c *activationContext) isMade() bool { return c.inner.Load() != nil }

// cancellable returns inner, making it first if need be, cancelled with
// the cause if the context was cancelled before.
func (c *activationContext) cancellable() context.Context {
	in := c.inner.Load()
	if in == nil {
		in = new(innerContext)
		// Its parent is never done: one made here and not installed
		// holds nothing, and is left to the collector.
		in.ctx, in.cancel = context.WithCancelCause((*valuesOnly)(c))
		if !c.inner.CompareAndSwap(nil, in) {
			in = c.inner.Load()
		}
	}
	if code := c.cause.Load(); code != 0 {
		in.cancel(causes[code])
	}
	return in.ctx
}

// cancel cancels the context with cause (nil meaning context.Canceled, as
// for a context.CancelCauseFunc), unless it was cancelled before: the
// first cause stands.
func (c *activationContext) cancel(cause error) {
	if cause == nil {
		cause = context.Canceled
	}
	c.cancelWith(causeCode(cause))
}

// canceledCode is context.Canceled's code in causes: the cause of the end
// of an activation.
const canceledCode = 1

// cancelWith is cancel with the cause's code.
func (c *activationContext) cancelWith(code uint32) {
	if !c.cause.CompareAndSwap(0, code) {
		return
	}
	if in := c.inner.Load(); in != nil {
		in.cancel(causes[code])
	}
}

// cancelCause returns why the context was cancelled, or nil: what
// context.Cause returns, without making inner.
func (c *activationContext) cancelCause() error {
	return causes[c.cause.Load()]
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
	return (*v.values).Value(key)
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
