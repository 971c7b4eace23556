package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/platform"
)

// benchHolder is the holder the floor writes.
var benchHolder = platform.Identity{Host: "bench", BootID: "0f4c2b7e-5a1d-4e8b-9c3f-1d2e3f4a5b6c", PID: 4242, StartTime: 123456, PIDNamespace: 4026531836}

// BenchmarkAcquireRelease measures Manager.Acquire and Close of one key
// on PostgreSQL against its floor: two raw transactions (BEGIN, SELECT
// the revision FOR UPDATE, UPDATE the row, COMMIT) that read and update
// one row of the same table on the same server, for the claim and the
// tombstone. The postgres sub-benchmark runs the floor (untimed) before
// each of its own operations, so that both see the same server load, and
// reports the ratio of their times.
func BenchmarkAcquireRelease(b *testing.B) {
	b.Run("postgres-floor", func(b *testing.B) {
		floor := newFloor(b, newSchema(b))
		b.ResetTimer()
		for range b.N {
			floor(b)
			floor(b)
		}
	})
	b.Run("postgres", func(b *testing.B) {
		schema := newSchema(b)
		repo := openRepo(b, schema)
		floor := newFloor(b, schema)
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

// newFloor sets up the lease table in schema with a row of its own, and
// returns one raw read-and-update transaction on that row, through a pool
// of its own.
func newFloor(b *testing.B, schema string) func(*testing.B) {
	openRepo(b, schema) // the schema
	pool, err := pgxpool.New(context.Background(), testURL(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	table := pgx.Identifier{schema, "collab_leases"}.Sanitize()
	holder := string(benchHolder.Marshal())
	renewed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339Nano)
	ttl := int64(time.Minute)
	if _, err := pool.Exec(context.Background(), "INSERT INTO "+table+" (key, revision, generation, holder, released, renewed_at, ttl_ns) VALUES ('floor', 1, 7, $1, false, $2, $3)", holder, renewed, ttl); err != nil {
		b.Fatal(err)
	}
	selectRev := "SELECT revision FROM " + table + " WHERE key = $1 FOR UPDATE"
	update := "UPDATE " + table + " SET revision = $1, generation = $2, holder = $3, released = $4, renewed_at = $5, ttl_ns = $6 WHERE key = $7"
	return func(b *testing.B) {
		ctx := context.Background()
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var rev int64
			if err := tx.QueryRow(ctx, selectRev, "floor").Scan(&rev); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, update, rev+1, 7, holder, false, renewed, ttl, "floor")
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
