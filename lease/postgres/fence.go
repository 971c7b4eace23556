package postgres

import (
	"context"
	"hash/fnv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rivus/collab/internal/keylock"
	"github.com/rivus/collab/lease/internal/check"
	"github.com/rivus/collab/platform"
)

// Backoff between attempts at an advisory lock that another session
// holds. A blocking pg_advisory_lock would need the query cancelled on
// the context's end, which in pgx closes the connection; a waiter polls
// instead, quickly at first, then at most every maxBackoff, which bounds
// how late it notices a released fence.
const (
	minBackoff = time.Millisecond
	maxBackoff = 100 * time.Millisecond
)

// unlockTimeout bounds the unlock statement; after it, the connection is
// closed, which drops the lock too.
const unlockTimeout = 5 * time.Second

// fences are per-key advisory locks, each held on a connection of pool
// until its unlock.
type fences struct {
	pool  *pgxpool.Pool
	clock platform.Clock
	space string // the qualified table, so that tables keep their fences apart
	local keylock.Locks
}

// lockID is the advisory lock of key: 64 bits of FNV-1a over the table's
// name and the key.
func (f *fences) lockID(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte(f.space))
	h.Write([]byte{0})
	h.Write([]byte(key))
	return int64(h.Sum64())
}

// fenceCheck is how often a held fence's session is checked; a fence
// lost to a dead session is noticed within about this long.
const fenceCheck = 200 * time.Millisecond

// Fence holds key's advisory lock on a connection of its own until
// unlock (idempotent).
func (r *Repository) Fence(ctx context.Context, key string) (func(), error) {
	unlock, _, err := r.fence(ctx, key, false)
	return unlock, err
}

// FenceWatch is Fence, and also returns a channel that is closed when the
// lock's session ends before unlock (the server restarted, the connection
// broke, an administrator ended it): the server has then dropped the lock,
// and lease.RunFenced cancels the fenced work.
func (r *Repository) FenceWatch(ctx context.Context, key string) (func(), <-chan struct{}, error) {
	return r.fence(ctx, key, true)
}

func (r *Repository) fence(ctx context.Context, key string, watch bool) (func(), <-chan struct{}, error) {
	if err := check.Call(ctx, key); err != nil {
		return nil, nil, err
	}
	unlockLocal, err := r.fences.local.Lock(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	conn, err := r.fences.wait(ctx, key)
	if err != nil {
		unlockLocal()
		return nil, nil, err
	}
	id := r.fences.lockID(key)
	var (
		lost      chan struct{}
		stopWatch = func() {}
	)
	if watch {
		lost = make(chan struct{})
		stopWatch = r.fences.watch(conn, lost)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			stopWatch() // the connection is the watcher's until it returns
			// The server first, so that a local waiter finds it free.
			release(conn, id)
			unlockLocal()
		})
	}, lost, nil
}

// watch checks conn's session every fenceCheck until the returned stop is
// called, and closes lost when the session is gone.
func (f *fences) watch(conn *pgxpool.Conn, lost chan struct{}) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		timer := f.clock.NewTimer(fenceCheck)
		defer timer.Stop()
		for {
			select {
			case <-quit:
				return
			case <-timer.C():
			}
			ctx, cancel := context.WithTimeout(context.Background(), fenceCheck)
			err := conn.Ping(ctx)
			cancel()
			if err != nil {
				close(lost)
				return
			}
			timer.Reset(fenceCheck)
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// wait polls for key's lock until it holds it, on the returned connection.
func (f *fences) wait(ctx context.Context, key string) (*pgxpool.Conn, error) {
	id := f.lockID(key)
	wait := platform.Backoff{Clock: f.clock, First: minBackoff, Max: maxBackoff, Jitter: true}
	for {
		conn, held, err := f.try(ctx, key, id)
		if err != nil || held {
			return conn, err
		}
		if err := wait.Wait(ctx); err != nil {
			return nil, err
		}
	}
}

// try makes one attempt at lock id, returning the connection that holds
// it, or held false when another session holds it.
func (f *fences) try(ctx context.Context, key string, id int64) (*pgxpool.Conn, bool, error) {
	conn, err := f.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fail(ctx, "fence", key, err)
	}
	var held bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", id).Scan(&held); err != nil {
		// The lock may have been taken before the failure: end the
		// session, which drops it.
		discard(conn)
		return nil, false, fail(ctx, "fence", key, err)
	}
	if !held {
		conn.Release()
		return nil, false, nil
	}
	return conn, true, nil
}

// release unlocks id on conn and gives conn back to the pool, or, if the
// unlock fails, closes it, which ends the session and drops the lock.
func release(conn *pgxpool.Conn, id int64) {
	ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
	defer cancel()
	var unlocked bool
	if err := conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", id).Scan(&unlocked); err != nil || !unlocked {
		discard(conn)
		return
	}
	conn.Release()
}

// discard closes conn instead of returning it to the pool.
func discard(conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
	defer cancel()
	_ = conn.Hijack().Close(ctx)
}
