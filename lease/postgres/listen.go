package postgres

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/rivus/collab/lease/internal/check"
	"github.com/rivus/collab/lease/store"
)

// Waiters are woken by LISTEN/NOTIFY: a tombstone's writer notifies the
// table's channel with the key once its save has committed, and a
// repository that watches listens on one connection of its own, which
// lives while anything is watched. A notification is a hint: one lost
// (the writer died between its save and its notification, the listening
// connection broke) leaves its waiters to their polling.

// channelOf names the notification channel of a table: a hash of its
// qualified name, so that tables in other schemas wake no one here, in
// an identifier's 63 bytes.
func channelOf(table string) string {
	h := fnv.New64a()
	h.Write([]byte(table))
	return fmt.Sprintf("collab_leases_%016x", h.Sum64())
}

// notifyFreed tells the listeners of the table that key was freed. Its
// failure is ignored: waiters poll.
func (r *Repository) notifyFreed(ctx context.Context, key string) {
	_, _ = r.pool.Exec(ctx, "SELECT pg_notify($1, $2)", r.listen.channel, key)
}

// WatchFreed wakes freed after each tombstone of key saved by any client
// of the table, on any host, that notifies (every version of this
// package that has it).
func (r *Repository) WatchFreed(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if err := check.Call(ctx, key); err != nil {
		return nil, nil, err
	}
	return r.listen.watch(ctx, key)
}

var _ store.Watcher = (*Repository)(nil)

// listener is a repository's LISTEN connection and the watches it wakes.
type listener struct {
	channel string
	config  *pgx.ConnConfig

	mu     sync.Mutex
	byKey  map[string]map[chan struct{}]struct{}
	cancel context.CancelFunc // ends the running loop; nil when none runs
	done   chan struct{}      // closed when that loop has returned
}

// watch adds a watch of key, starting the loop (and its LISTEN, before
// it returns) if none runs.
func (l *listener) watch(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel == nil {
		conn, err := pgx.ConnectConfig(ctx, l.config.Copy())
		if err != nil {
			return nil, nil, fail(ctx, "watch", key, err)
		}
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.channel}.Sanitize()); err != nil {
			_ = conn.Close(context.Background())
			return nil, nil, fail(ctx, "watch", key, err)
		}
		loopCtx, cancel := context.WithCancel(context.Background())
		l.cancel, l.done = cancel, make(chan struct{})
		go l.loop(loopCtx, conn, l.done)
	}
	if l.byKey == nil {
		l.byKey = map[string]map[chan struct{}]struct{}{}
	}
	if l.byKey[key] == nil {
		l.byKey[key] = map[chan struct{}]struct{}{}
	}
	c := make(chan struct{}, 1)
	l.byKey[key][c] = struct{}{}
	var once sync.Once
	return c, func() { once.Do(func() { l.remove(key, c) }) }, nil
}

// remove ends the watch c of key, and the loop with the last watch.
func (l *listener) remove(key string, c chan struct{}) {
	l.mu.Lock()
	delete(l.byKey[key], c)
	if len(l.byKey[key]) == 0 {
		delete(l.byKey, key)
	}
	if len(l.byKey) != 0 || l.cancel == nil {
		l.mu.Unlock()
		return
	}
	cancel, done := l.cancel, l.done
	l.cancel, l.done = nil, nil
	l.mu.Unlock()
	cancel()
	<-done
}

// close ends the loop, if one runs; the watches then wake no more.
func (l *listener) close() {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.cancel, l.done = nil, nil
	l.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// loop wakes the watches of each notification's key until ctx ends or
// the connection fails; a failure wakes every watch, whose waiters then
// read for themselves, and leaves the next watch to listen again.
func (l *listener) loop(ctx context.Context, conn *pgx.Conn, done chan struct{}) {
	defer close(done)
	defer conn.Close(context.Background())
	for {
		n, err := conn.WaitForNotification(ctx)
		l.mu.Lock()
		if err != nil {
			if l.done == done { // not ended by remove or close
				l.cancel, l.done = nil, nil
				for _, set := range l.byKey {
					wakeAll(set)
				}
			}
			l.mu.Unlock()
			return
		}
		wakeAll(l.byKey[n.Payload])
		l.mu.Unlock()
	}
}

// wakeAll wakes every channel of set without blocking.
func wakeAll(set map[chan struct{}]struct{}) {
	for c := range set {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}
