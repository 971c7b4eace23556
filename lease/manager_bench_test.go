package lease_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/internal/repotest"
	"github.com/rivus/collab/lease/leasetest"
	"github.com/rivus/collab/lease/sqlite"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
	platformsqlite "github.com/rivus/collab/platform/sqlite"
)

// BenchmarkAcquireRelease measures Manager.Acquire and Close of one key
// on SQLite against its floor: two raw BEGIN IMMEDIATE transactions that
// read and update one row (the claim and the tombstone), on the same
// schema, pragmas and file system. The sqlite sub-benchmark runs one
// floor operation (untimed) before each of its own, so that both see the
// same disk, and reports the ratio of their times.
//
// The memory sub-benchmark has no floor: it measures the manager's own
// work, and is what to compare between builds with and without the tag
// collabmonitor (the contract monitor's cost when on; off, the compiler
// drops it).
func BenchmarkAcquireRelease(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		m, err := lease.NewManager(lease.Config{TTL: time.Minute, Heartbeat: 15 * time.Second, Repository: lease.NewMemoryRepository()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = m.Close() })
		ctx := context.Background()
		b.ReportAllocs()
		for range b.N {
			h, err := m.Acquire(ctx, "task:42")
			if err != nil {
				b.Fatal(err)
			}
			if err := h.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sqlite-floor", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "leases.db")
		repotest.OpenSQLite(b, platformsqlite.OS(), path)
		floor := repotest.FloorTx(b, path)
		b.ResetTimer()
		for range b.N {
			floor(b)
			floor(b)
		}
	})
	b.Run("sqlite", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "leases.db")
		repo := repotest.OpenSQLite(b, platformsqlite.OS(), path)
		floor := repotest.FloorTx(b, path)
		m, err := lease.NewManager(lease.Config{TTL: time.Minute, Heartbeat: 15 * time.Second, Repository: repo})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = m.Close() })
		ctx := context.Background()
		var floorTime time.Duration
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			start := time.Now()
			floor(b)
			floor(b)
			floorTime += time.Since(start)
			b.StartTimer()
			h, err := m.Acquire(ctx, "task:42")
			if err != nil {
				b.Fatal(err)
			}
			if err := h.Close(); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(b.Elapsed())/float64(floorTime), "ratio")
	})
}

// heartbeatLeases is how many leases BenchmarkHeartbeat renews a tick.
const heartbeatLeases = 10_000

// BenchmarkHeartbeat measures one heartbeat tick of a manager holding
// 10,000 leases on SQLite (driven by a fake clock: one op is one tick and
// its 10,000 renewals) against its floor: one raw BEGIN IMMEDIATE
// transaction that reads and updates 10,000 rows with prepared
// statements. The manager's sub-benchmark runs one floor transaction
// (untimed) before each tick and reports the ratio of their times.
func BenchmarkHeartbeat(b *testing.B) {
	b.Run(fmt.Sprintf("sqlite-%d-floor", heartbeatLeases), func(b *testing.B) {
		floor := newHeartbeatFloor(b)
		b.ResetTimer()
		for range b.N {
			floor(b)
		}
	})
	owner := b // the manager outlives the rounds of the sub-benchmark
	var tick func(*testing.B)
	b.Run(fmt.Sprintf("sqlite-%d", heartbeatLeases), func(b *testing.B) {
		if tick == nil {
			tick = newHeartbeatManager(owner, b)
		}
		floor := newHeartbeatFloor(b)
		var floorTime time.Duration
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			start := time.Now()
			floor(b)
			floorTime += time.Since(start)
			b.StartTimer()
			tick(b)
		}
		b.StopTimer()
		b.ReportMetric(float64(b.Elapsed())/float64(floorTime), "ratio")
	})
}

// newHeartbeatManager returns one tick of a manager holding
// heartbeatLeases leases on a SQLite repository with a fake clock: it
// advances the clock by a heartbeat and returns once every lease has
// been renewed. The manager lives until owner ends, as acquiring its
// leases takes seconds.
func newHeartbeatManager(owner testing.TB, b *testing.B) func(*testing.B) {
	f := platformtest.New(owner)
	clock := newBenchClock()
	p := *f.Platform
	p.Clock = clock
	repo, err := sqlite.Open(&p, filepath.Join(owner.TempDir(), "leases.db"))
	if err != nil {
		b.Fatal(err)
	}
	var renewed atomic.Int64
	done := make(chan struct{}, 1)
	target := atomic.Int64{}
	m, err := lease.NewManager(lease.Config{TTL: 4 * time.Second, Heartbeat: time.Second, Repository: repo, Platform: &p,
		OnEvent: func(e lease.Event) {
			if e.Kind == lease.Renewed && renewed.Add(1) == target.Load() {
				done <- struct{}{}
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	owner.Cleanup(func() {
		_ = m.Close()
		_ = repo.Close()
	})
	ctx := context.Background()
	for i := range heartbeatLeases {
		if _, err := m.Acquire(ctx, fmt.Sprintf("task:%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	return func(b *testing.B) {
		target.Add(heartbeatLeases)
		clock.Advance(time.Second)
		select {
		case <-done:
		case <-time.After(time.Minute):
			b.Fatalf("tick not done after a minute: %d of %d renewals", renewed.Load(), target.Load())
		}
	}
}

// newHeartbeatFloor adds heartbeatLeases rows to a database of their own
// and returns one raw transaction that reads and updates every row.
func newHeartbeatFloor(b *testing.B) func(*testing.B) {
	path := filepath.Join(b.TempDir(), "leases.db")
	repotest.OpenSQLite(b, platformsqlite.OS(), path) // the schema
	db := repotest.RawDB(b, path)
	holder := string(repotest.Sample.Holder.Marshal())
	renewed := repotest.Sample.RenewedAt.Format(time.RFC3339Nano)
	ttl := int64(repotest.Sample.TTL)
	keys := make([]string, heartbeatLeases)
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for i := range keys {
		keys[i] = fmt.Sprintf("task:%d", i)
		if _, err := tx.Exec("INSERT INTO leases (key, revision, generation, holder, released, renewed_at, ttl_ns) VALUES (?, 1, 7, ?, 0, ?, ?)",
			keys[i], holder, renewed, ttl); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return func(b *testing.B) {
		ctx := b.Context()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = tx.Rollback() }()
		sel := prepare(b, tx, "SELECT revision FROM leases WHERE key = ?")
		upd := prepare(b, tx, "UPDATE leases SET revision = ?, generation = ?, holder = ?, released = ?, renewed_at = ?, ttl_ns = ? WHERE key = ?")
		for _, k := range keys {
			var rev int64
			if err := sel.QueryRowContext(ctx, k).Scan(&rev); err != nil {
				b.Fatal(err)
			}
			if _, err := upd.ExecContext(ctx, rev+1, 7, holder, false, renewed, ttl, k); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchClock is a fake clock whose timers stop and reset in constant
// time. platformtest.Clock scans its timers on every Stop and Reset, and
// with 10,000 deadlines re-armed a tick that scan alone is a good part
// of the tick; real timers cost O(log n). Advance fires the timers that
// fall due in no particular order, which a tick of renewals does not need.
//
// As the manager's readingClock in the tests, a new timer counts from the
// last reading returned, so that a tick advanced while the heartbeat loop
// plans its timer is not missed.
type benchClock struct {
	mu     sync.Mutex
	wall   time.Time
	mono   time.Duration
	last   time.Duration // the last reading returned
	timers map[*benchTimer]struct{}
}

var _ platform.Clock = (*benchClock)(nil)

func newBenchClock() *benchClock {
	return &benchClock{wall: platformtest.Epoch, mono: time.Hour, last: time.Hour, timers: map[*benchTimer]struct{}{}}
}

func (c *benchClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall
}

func (c *benchClock) Monotonic() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = c.mono
	return c.mono
}

func (c *benchClock) NewTimer(d time.Duration) platform.Timer {
	t := &benchTimer{c: c, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

func (c *benchClock) AfterFunc(d time.Duration, f func()) platform.Timer {
	t := &benchTimer{c: c, fn: f}
	t.Reset(d)
	return t
}

// Advance moves the clock by d and fires every timer due.
func (c *benchClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mono += d
	c.wall = c.wall.Add(d)
	for t := range c.timers {
		if t.at <= c.mono {
			delete(c.timers, t)
			t.fireLocked()
		}
	}
}

type benchTimer struct {
	c  *benchClock
	ch chan time.Time // nil for AfterFunc timers
	fn func()
	at time.Duration
}

func (t *benchTimer) C() <-chan time.Time { return t.ch }

func (t *benchTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, active := t.c.timers[t]
	delete(t.c.timers, t)
	t.drainLocked()
	return active
}

func (t *benchTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, active := t.c.timers[t]
	delete(t.c.timers, t)
	t.drainLocked()
	t.at = t.c.last + d
	if t.at <= t.c.mono {
		t.fireLocked()
		return active
	}
	t.c.timers[t] = struct{}{}
	return active
}

func (t *benchTimer) drainLocked() {
	if t.ch != nil {
		select {
		case <-t.ch:
		default:
		}
	}
}

func (t *benchTimer) fireLocked() {
	if t.fn != nil {
		go t.fn()
		return
	}
	select {
	case t.ch <- t.c.wall:
	default:
	}
}

func prepare(b *testing.B, tx *sql.Tx, query string) *sql.Stmt {
	st, err := tx.Prepare(query)
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkAcquireWait: release to takeover latency on the memory store
// (see leasetest.BenchmarkAcquireWait).
func BenchmarkAcquireWait(b *testing.B) {
	leasetest.BenchmarkAcquireWait(b, func(*testing.B) store.Repository { return lease.NewMemoryRepository() })
}
