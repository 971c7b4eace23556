package lanes

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Goroutines wake, cancel and close at random. An observer checks, at
// every moment, one activation per key and at most MaxConcurrent in all;
// at the end, the last successful wake of every key was served by an
// activation that started after it, or reported dropped (OnExit with
// Interrupted{Started: false}) after it.
func TestStressWakeCancelClose(t *testing.T) {
	const (
		keys          = 32
		wakers        = 8
		cancelers     = 2
		opsEach       = 2000
		maxConcurrent = 3
	)
	var (
		ks        [keys]stressKey
		dropped   [keys]atomic.Int64 // highest wake number a drop report covers
		running   atomic.Int32
		ops       atomic.Int64
		mu        sync.Mutex
		violation error
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if violation == nil {
			violation = fmt.Errorf(format, args...)
		}
	}
	l := newLanes(t, Config[int]{
		MaxConcurrent: maxConcurrent,
		MaxQueued:     6,
		Activate: func(ctx context.Context, key int) error {
			k := &ks[key]
			k.noteServed(k.seq.Load())
			if a := k.active.Add(1); a != 1 {
				fail("%d activations of key %d at once", a, key)
			}
			if r := running.Add(1); r > maxConcurrent {
				fail("%d activations at once, MaxConcurrent %d", r, maxConcurrent)
			}
			for range rand.IntN(4) {
				runtime.Gosched()
			}
			running.Add(-1)
			k.active.Add(-1)
			return ctx.Err()
		},
		OnExit: func(key int, exit Exit) {
			if i, ok := exit.(Interrupted); ok && !i.Started {
				n := ks[key].seq.Load()
				for {
					old := dropped[key].Load()
					if old >= n || dropped[key].CompareAndSwap(old, n) {
						break
					}
				}
			}
		},
	})
	closeAt := int64(rand.IntN(wakers*opsEach/2) + wakers*opsEach/4)
	var wg sync.WaitGroup
	for range wakers {
		wg.Go(func() {
			for range opsEach {
				runtime.Gosched()
				if ops.Add(1) == closeAt {
					l.Close()
				}
				key := rand.IntN(keys)
				n := ks[key].seq.Add(1)
				_, err := l.Wake(key)
				switch {
				case err == nil:
					ks[key].noteWake(n)
				case errors.Is(err, ErrQueueFull), errors.Is(err, ErrClosed):
				default:
					fail("Wake(%d): %v", key, err)
				}
			}
		})
	}
	for range cancelers {
		wg.Go(func() {
			for range opsEach / 4 {
				runtime.Gosched()
				if err := l.Cancel(context.Background(), rand.IntN(keys)); err != nil {
					fail("Cancel: %v", err)
				}
			}
		})
	}
	wg.Wait()
	l.Close()
	mu.Lock()
	defer mu.Unlock()
	if violation != nil {
		t.Fatal(violation)
	}
	for key := range ks {
		k := &ks[key]
		k.mu.Lock()
		last, served := k.lastOK, k.served
		k.mu.Unlock()
		if drop := dropped[key].Load(); last > max(served, drop) {
			t.Errorf("key %d: wake %d succeeded, but the last activation started at %d and the last drop covered %d", key, last, served, drop)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lanes) != 0 || l.running != 0 || l.queue.len() != 0 || l.reserved != 0 {
		t.Errorf("after Close: %d lanes, %d running, %d queued, %d reserved", len(l.lanes), l.running, l.queue.len(), l.reserved)
	}
}
