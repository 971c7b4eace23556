package leasetest

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
)

// BenchmarkAcquireWait measures, on the repository open returns, how soon
// a waiter (lease.Manager.AcquireWait) takes a lease after its holder
// releases it: one release and one takeover per op, at a random point of
// the waiter's wait, at a TTL of one second and of one minute (the
// command line's default). It reports the latency's p50 and p99 in
// milliseconds, over b.N handovers and never fewer than 300, and the p99
// as a ratio to the polling bound, TTL/10, the most a waiter that polls
// takes: a repository that wakes its waiters (store.Watcher) stays far
// below it.
//
//	func BenchmarkAcquireWait(b *testing.B) {
//		leasetest.BenchmarkAcquireWait(b, func(b *testing.B) store.Repository { return openMyRepository(b) })
//	}
func BenchmarkAcquireWait(b *testing.B, open func(b *testing.B) store.Repository) {
	for _, ttl := range []time.Duration{time.Second, time.Minute} {
		b.Run("ttl="+ttl.String(), func(b *testing.B) { benchmarkAcquireWait(b, open, ttl) })
	}
}

// minHandovers is how many handovers each run of BenchmarkAcquireWait
// measures at least: enough that its p99 is the third slowest, not one
// outlier (about 8 s a run).
const minHandovers = 300

func benchmarkAcquireWait(b *testing.B, open func(b *testing.B) store.Repository, ttl time.Duration) {
	repo := open(b)
	cfg := lease.Config{TTL: ttl, Heartbeat: ttl / 4, Repository: repo}
	managers := [2]*lease.Manager{}
	for i := range managers {
		m, err := lease.NewManager(cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		managers[i] = m
	}
	ctx := context.Background()
	held, err := managers[0].Acquire(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	// At least minHandovers samples, whatever b.N: the p99 of fewer than
	// 100 is their maximum, one slow fsync's.
	n := max(b.N, minHandovers)
	latencies := make([]time.Duration, 0, n)
	b.ResetTimer()
	for i := range n {
		waiter := managers[(i+1)%2]
		got := make(chan *lease.Lease, 1)
		go func() {
			l, err := waiter.AcquireWait(ctx, "bench")
			if err != nil {
				b.Error(err)
			}
			got <- l
		}()
		// Release at a random point of the waiter's wait: within its
		// first poll, or 50 ms of it at most, so that a minute's TTL
		// does not make each op last seconds.
		time.Sleep(rand.N(min(ttl/10, 50*time.Millisecond)))
		released := time.Now()
		if err := held.Close(); err != nil {
			b.Fatal(err)
		}
		if held = <-got; held == nil {
			b.FailNow()
		}
		latencies = append(latencies, time.Since(released))
	}
	b.StopTimer()
	_ = held.Close()
	slices.Sort(latencies)
	p := func(q float64) time.Duration { return latencies[min(int(q*float64(len(latencies))), len(latencies)-1)] }
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(p(0.5))/float64(time.Millisecond), "p50-ms")
	b.ReportMetric(float64(p(0.99))/float64(time.Millisecond), "p99-ms")
	b.ReportMetric(float64(p(0.99))/float64(ttl/10), "p99/poll-bound")
}
