// Package keylock is a set of per-key mutexes whose waits end with a
// context. A key's entry exists only while it is held, so the map never
// outgrows the keys in use.
package keylock

import (
	"context"
	"sync"
)

// Locks is a set of per-key mutexes. The zero value is ready to use.
type Locks struct {
	mu   sync.Mutex
	held map[string]chan struct{} // closed when the key's holder unlocks
}

// Lock blocks until the caller holds key or ctx ends (then it returns
// context.Cause(ctx) and holds nothing). Waiters wait on the holder's
// channel, which unlock closes: every waiter wakes and they race again,
// so that no wake can be lost (a cancelled waiter cannot swallow it, as
// it could a condition variable's Signal). unlock is idempotent.
func (l *Locks) Lock(ctx context.Context, key string) (unlock func(), err error) {
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
			return l.unlocker(key, ch), nil
		}
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// unlocker returns the idempotent unlock of key, held under ch.
func (l *Locks) unlocker(key string, ch chan struct{}) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			delete(l.held, key)
			l.mu.Unlock()
			close(ch)
		})
	}
}

// Size reports how many keys are held.
func (l *Locks) Size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held)
}
