package postgres

import (
	"context"
	"sync"
)

// keyLocks is a set of per-key mutexes whose waits end with a context, so
// that waiters of one repository hand a fence over in the process and
// only one of them polls the server. A key's entry exists only while it
// is held.
type keyLocks struct {
	mu   sync.Mutex
	held map[string]chan struct{} // closed when the key's holder unlocks
}

// lock blocks until the caller holds key or ctx ends. Every waiter wakes
// when the holder's channel closes and they race again, so no wake is
// lost to a waiter that gave up.
func (l *keyLocks) lock(ctx context.Context, key string) (unlock func(), err error) {
	for {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		l.mu.Lock()
		ch, busy := l.held[key]
		if !busy {
			if l.held == nil {
				l.held = make(map[string]chan struct{})
			}
			ch = make(chan struct{})
			l.held[key] = ch
			l.mu.Unlock()
			return func() {
				l.mu.Lock()
				delete(l.held, key)
				l.mu.Unlock()
				close(ch)
			}, nil
		}
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}
