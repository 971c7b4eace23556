package lease

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// AcquireWait acquires the lease on key, waiting while another holder has
// it, until ctx ends: then it holds nothing and returns the cause, as a
// *WaitError that also carries the last attempt's refusal when the wait
// ended between attempts (an attempt cut short returns what Acquire
// does). A repository that can tell when the key is freed
// (store.Watcher: every repository of this module, on Linux for SQLite
// and files) wakes it the moment a release's or a break's tombstone is
// saved, in this process or another. It also tries again every TTL/10 or
// so (this manager's TTL, with jitter, so that waiters of several
// processes do not try in step): that is how it takes over a holder that
// stopped without a tombstone, at once when proven dead, and once the
// TTL has passed since this manager first saw its record when silent,
// as Acquire does. Any error other than a *HeldError ends the wait and is
// returned. opts are Acquire's. Its waits are timers of the manager's
// loop; Close ends them with ErrClosed.
func (m *Manager) AcquireWait(ctx context.Context, key string, opts ...AcquireOption) (*Lease, error) {
	// Between a twentieth and a tenth of the TTL, at least a millisecond.
	wait := platform.Backoff{First: max(m.cfg.TTL/10, 2*time.Millisecond), Jitter: true}
	// Before the first attempt, so that no release after it goes unheard.
	freed, stop := store.WatchFreedOrPoll(ctx, m.cfg.Repository, key)
	defer stop()
	m.mu.Lock()
	m.trying++
	m.mu.Unlock()
	for {
		h, err := m.Acquire(ctx, key, opts...)
		var held *HeldError
		if !errors.As(err, &held) {
			m.mu.Lock()
			m.trying--
			m.changedLocked()
			m.mu.Unlock()
			return h, err
		}
		if err := m.sleep(ctx, wait.Next(), freed); err != nil {
			return nil, &WaitError{Err: err, Last: held}
		}
	}
}

// sleeper is a wait on the timer loop: of AcquireWait (wake), or of a
// context's timeout (expire).
type sleeper struct {
	at     time.Duration
	wake   chan struct{} // closed by the loop at at
	expire func()        // called by the loop at at, instead
}

// sleep waits d on the manager's timer loop, or until freed receives
// (a nil freed never does), ctx ends or the manager closes; it counts
// the caller's attempt as over meanwhile, and the loop or the wake by
// freed counts it as begun again.
func (m *Manager) sleep(ctx context.Context, d time.Duration, freed <-chan struct{}) error {
	s := &sleeper{wake: make(chan struct{})}
	m.mu.Lock()
	s.at = m.now() + d
	m.sleepers = append(m.sleepers, s)
	m.trying--
	m.changedLocked()
	m.kickLoop()
	m.mu.Unlock()
	var err error
	select {
	case <-s.wake:
	case <-freed:
	case <-ctx.Done():
		err = context.Cause(ctx)
	case <-m.stop:
		err = ErrClosed
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch i := slices.Index(m.sleepers, s); {
	case i >= 0: // not woken by the loop
		m.sleepers = slices.Delete(m.sleepers, i, i+1)
		if err == nil { // but by a tombstone: the attempt begins now
			m.trying++
		}
	case err != nil: // woken, but the ctx or Close came first
		m.trying--
		m.changedLocked()
	}
	return err
}

// wakeSleepersLocked wakes the sleepers whose time has come by now, and
// returns when the next falls due, if one does.
func (m *Manager) wakeSleepersLocked(now time.Duration) (time.Duration, bool) {
	next, found := time.Duration(0), false
	m.sleepers = slices.DeleteFunc(m.sleepers, func(s *sleeper) bool {
		switch {
		case s.at > now:
		case s.expire != nil:
			s.expire()
			return true
		default:
			m.trying++ // the attempt begins now, as far as Settle can tell
			close(s.wake)
			return true
		}
		if !found || s.at < next {
			next, found = s.at, true
		}
		return false
	})
	return next, found
}
