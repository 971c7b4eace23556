package leader

import (
	"context"
	"errors"
	"time"

	"github.com/rivus/collab/lease"
)

// Config configures Run.
type Config struct {
	// Manager acquires and renews the lease; its TTL and heartbeat are
	// the election's. Required.
	Manager *lease.Manager
	// Key names the election. Required.
	Key string
	// Lead runs while this process leads, with the lease's fencing token.
	// Its context is cancelled when leadership ends (see the package
	// doc). Required.
	Lead func(ctx context.Context, token lease.Token) error
	// OnStarted, if set, is called when this process starts leading,
	// before Lead.
	OnStarted func(token lease.Token)
	// OnStopped, if set, is called when a term has ended, after Lead has
	// returned and the lease was let go. cause is lease.ErrLost when the
	// lease was lost, the cause of Run's context when that ended, and
	// otherwise what Lead returned.
	OnStopped func(token lease.Token, cause error)
	// OnError, if set, hears each failed attempt to acquire the lease (a
	// repository error), which Run retries after RetryPeriod, and each
	// error Lead returns after leadership was lost.
	OnError func(error)
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
	case c.Lead == nil:
		return &ConfigError{"Lead", "is required"}
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
	for {
		l, err := cfg.Manager.AcquireWait(ctx, cfg.Key)
		switch {
		case ctx.Err() != nil:
			if l != nil {
				l.Close()
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
		if lost, err := term(ctx, cfg, l); !lost {
			return err
		}
	}
}

// term leads while l is held: it runs Lead, then lets the lease go. It
// reports whether the lease was lost, so that Run campaigns again;
// otherwise the error Run returns.
func term(ctx context.Context, cfg Config, l *lease.Lease) (lost bool, err error) {
	token := l.Token()
	if cfg.OnStarted != nil {
		cfg.OnStarted(token)
	}
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-l.Lost():
			cancel(l.Err())
		case <-lctx.Done():
		}
	}()
	leadErr := cfg.Lead(lctx, token)
	lost = errors.Is(l.Err(), lease.ErrLost)
	closed := errors.Is(l.Err(), lease.ErrReleased) // the Manager's Close released it
	l.Close()
	cause := leadErr
	switch {
	case lost:
		cause = lease.ErrLost
		if leadErr != nil && !errors.Is(leadErr, context.Canceled) && !errors.Is(leadErr, lease.ErrLost) {
			report(cfg.OnError, leadErr)
		}
	case ctx.Err() != nil:
		cause = context.Cause(ctx)
	case closed:
		cause = lease.ErrClosed
	}
	if cfg.OnStopped != nil {
		cfg.OnStopped(token, cause)
	}
	switch {
	case ctx.Err() != nil: // lost at the moment Run's ctx ended: Run ends
		return false, context.Cause(ctx)
	case closed:
		return false, lease.ErrClosed
	}
	return lost, cause
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
