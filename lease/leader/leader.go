package leader

import (
	"context"
	"errors"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
)

// Config configures Run.
type Config struct {
	// Manager acquires and renews the lease; its TTL and heartbeat are
	// the election's. Required.
	Manager *lease.Manager
	// Key names the election: a lease key (store.ValidateKey). Required.
	Key string
	// Lead runs while this process leads, with the lease's fencing token.
	// Its context is cancelled when leadership ends (see the package
	// doc), and in any case before the lease is let go. Required.
	Lead func(ctx context.Context, token lease.Token) error
	// OnStarted, if set, is called when this process starts leading,
	// before Lead.
	OnStarted func(token lease.Token)
	// OnStopped, if set, is called when a term has ended, after Lead has
	// returned, its context was cancelled and the lease was let go. cause
	// is the lease's *lease.LossError (errors.Is lease.ErrLost), which
	// says why, when the lease was lost while Lead ran, the cause
	// of Run's context when that ended, lease.ErrClosed when the Manager
	// was closed, ErrLeadPanicked when OnStarted or Lead panicked (the
	// panic goes on once OnStopped returns), and otherwise what Lead
	// returned.
	OnStopped func(token lease.Token, cause error)
	// OnError, if set, hears each failed attempt to acquire the lease (a
	// repository error), which Run retries after RetryPeriod, each error
	// Lead returns after leadership was lost, and each failure to let the
	// lease go (it then stays held until its TTL has passed).
	OnError func(error)
	// Value, if set, is published with each term's lease (lease.WithValue):
	// where the leader can be reached, or its version, for followers to
	// read with Observe. At most store.MaxValueLen bytes of valid UTF-8
	// without NUL.
	Value string
	// RetryPeriod is the wait after a failed attempt to acquire; zero
	// means a second. Waiting for a held lease is AcquireWait's: about a
	// tenth of the manager's TTL.
	RetryPeriod time.Duration
}

// ConfigError names the invalid field of a Config.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return "leader: Config." + e.Field + " " + e.Reason }

func (c Config) validate() error {
	switch {
	case c.Manager == nil:
		return &ConfigError{"Manager", "is required"}
	case c.Key == "":
		return &ConfigError{"Key", "is required"}
	case store.ValidateKey(c.Key) != nil:
		return &ConfigError{"Key", "is not a lease key: " + store.ValidateKey(c.Key).Error()}
	case c.Lead == nil:
		return &ConfigError{"Lead", "is required"}
	case store.ValidateValue(c.Value) != nil:
		return &ConfigError{"Value", "cannot be published: " + store.ValidateValue(c.Value).Error()}
	case c.RetryPeriod < 0:
		return &ConfigError{"RetryPeriod", "is negative"}
	}
	return nil
}

// Run campaigns for leadership until ctx ends, running cfg.Lead in each
// term, and returns context.Cause(ctx) then; it returns early with Lead's
// result when Lead returns while leading, with lease.ErrClosed when the
// manager is closed, and with a *ConfigError before anything else.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	retry := cfg.RetryPeriod
	if retry == 0 {
		retry = time.Second
	}
	var last *lease.Lease // the last term's lease, for the monitor
	for {
		if monitoring {
			campaigning(last)
		}
		l, err := cfg.Manager.AcquireWait(ctx, cfg.Key, lease.WithValue(cfg.Value))
		switch {
		case ctx.Err() != nil:
			if l != nil {
				if err := l.Close(); err != nil {
					report(cfg.OnError, err)
				}
			}
			return context.Cause(ctx)
		case errors.Is(err, lease.ErrClosed):
			return err
		case err != nil:
			report(cfg.OnError, err)
			if err := sleep(ctx, retry); err != nil {
				return err
			}
			continue
		}
		last = l
		if lost, err := term(ctx, cfg, l); !lost {
			return err
		}
	}
}

// ErrLeadPanicked is OnStopped's cause for a term that ended in a panic
// of OnStarted or Lead; the panic goes on once OnStopped has returned.
var ErrLeadPanicked = errors.New("leader: OnStarted or Lead panicked")

// term leads while l is held: it runs Lead, then ends the term (endTerm),
// also when OnStarted or Lead panics. It reports whether the lease was
// lost, so that Run campaigns again; otherwise the error Run returns.
func term(ctx context.Context, cfg Config, l *lease.Lease) (lost bool, err error) {
	t := &leaderTerm{cfg: cfg, lease: l, token: l.Token()}
	var lctx context.Context
	lctx, t.cancel = context.WithCancelCause(ctx)
	t.leadCtx = lctx
	defer func() { lost, err = t.end(ctx) }()
	if cfg.OnStarted != nil {
		cfg.OnStarted(t.token)
	}
	go func() {
		select {
		case <-l.Lost():
			t.cancel(l.Err())
		case <-lctx.Done():
		}
	}()
	// The lease may have ended already (during OnStarted, or as it was
	// acquired): Lead must not begin with a live context then, and the
	// goroutine above may not have run yet.
	if err := l.Err(); err != nil {
		t.cancel(err)
	}
	if monitoring {
		t.leading()
	}
	t.leadErr = cfg.Lead(lctx, t.token)
	// Lost while Lead ran, as Lead could see: a Lead that returns on its
	// own as the lease is lost steps down rather than leading again.
	t.lost = errors.Is(context.Cause(lctx), lease.ErrLost)
	t.returned = true
	return false, nil // set by t.end
}

// leaderTerm is one term of Run, as its end reads it.
type leaderTerm struct {
	cfg      Config
	lease    *lease.Lease
	token    lease.Token
	cancel   context.CancelCauseFunc // ends Lead's context
	leadCtx  context.Context         // Lead's context
	leadErr  error                   // what Lead returned
	lost     bool                    // Lead's context was ended by the lease's loss
	returned bool                    // Lead returned (it did not panic)
}

// end ends the term, in this order, whatever ended it: Lead's context is
// cancelled, so that nothing of this term believes it leads once the
// lease is let go; the lease is let go (an error of that goes to
// OnError); OnStopped hears why the term ended. It returns term's
// results.
func (t *leaderTerm) end(ctx context.Context) (lost bool, err error) {
	closed := errors.Is(t.lease.Err(), lease.ErrClosed) // the Manager's Close released it
	cause := t.leadErr
	switch {
	case !t.returned:
		cause = ErrLeadPanicked
	case t.lost:
		cause = context.Cause(t.leadCtx) // the lease's *lease.LossError, which says why
		if t.leadErr != nil && !errors.Is(t.leadErr, context.Canceled) && !errors.Is(t.leadErr, lease.ErrLost) {
			report(t.cfg.OnError, t.leadErr)
		}
	case ctx.Err() != nil:
		cause = context.Cause(ctx)
	case closed:
		cause = lease.ErrClosed
	}
	t.cancel(cause)
	if monitoring {
		t.releasing()
	}
	if err := t.lease.Close(); err != nil {
		report(t.cfg.OnError, err)
	}
	if t.cfg.OnStopped != nil {
		if monitoring {
			t.stopping()
		}
		t.cfg.OnStopped(t.token, cause)
	}
	switch {
	case ctx.Err() != nil: // lost at the moment Run's ctx ended: Run ends
		return false, context.Cause(ctx)
	case closed:
		return false, lease.ErrClosed
	}
	return t.lost, cause
}

func report(onError func(error), err error) {
	if onError != nil {
		onError(err)
	}
}

// sleep waits d, or until ctx ends (then it returns context.Cause(ctx)).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
