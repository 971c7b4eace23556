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
	"time"
)

// stressKey is one key's record in the stress test.
type stressKey struct {
	active atomic.Int32 // activations of the key running now
	// seq counts wakes: a waker takes the next number before it calls
	// Wake, so an activation that starts after a wake arrived reads at
	// least that wake's number.
	seq atomic.Int64

	mu     sync.Mutex
	lastOK int64 // number of the latest wake that succeeded
	served int64 // highest number read by an activation that has ended
}

func (k *stressKey) noteWake(n int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lastOK = max(k.lastOK, n)
}

func (k *stressKey) noteServed(n int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.served = max(k.served, n)
}

func (k *stressKey) pending() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.served < k.lastOK
}

// Many goroutines wake random keys: at every moment at most one
// activation per key and MaxConcurrent in all run, and every successful
// wake is followed by an activation that starts after it.
func TestStress(t *testing.T) {
	const (
		keys          = 64
		wakers        = 16
		wakesEach     = 4000
		maxConcurrent = 4
	)
	var (
		ks      [keys]stressKey
		running atomic.Int32
		results [Coalesced + 1]atomic.Int64
		full    atomic.Int64
		ran     atomic.Int64

		mu        sync.Mutex
		violation error // the first one seen off the test's goroutine
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if violation == nil {
			violation = fmt.Errorf(format, args...)
		}
	}
	progress := make(chan struct{}, 1)
	l := newLanes(t, Config[int]{
		MaxConcurrent: maxConcurrent,
		MaxQueued:     8,
		Activate: func(_ context.Context, key int) error {
			k := &ks[key]
			n := k.seq.Load()
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
			k.noteServed(n)
			ran.Add(1)
			select {
			case progress <- struct{}{}:
			default:
			}
			return nil
		},
	})

	var wg sync.WaitGroup
	for range wakers {
		wg.Go(func() {
			for range wakesEach {
				// Yield, so that activations end while wakes keep
				// coming and the queue both fills and drains.
				runtime.Gosched()
				key := rand.IntN(keys)
				n := ks[key].seq.Add(1)
				r, err := l.Wake(key)
				switch {
				case err == nil:
					results[r].Add(1)
					ks[key].noteWake(n)
				case errors.Is(err, ErrQueueFull):
					full.Add(1)
				default:
					fail("Wake(%d): %v", key, err)
				}
			}
		})
	}
	wg.Wait()

	// Wait until every key has served its last successful wake.
	deadline := time.After(patience)
	for k := 0; k < keys; {
		if !ks[k].pending() {
			k++
			continue
		}
		select {
		case <-progress:
		case <-deadline:
			ks[k].mu.Lock()
			defer ks[k].mu.Unlock()
			t.Fatalf("key %d: wake %d succeeded but no activation started after it (last served %d)",
				k, ks[k].lastOK, ks[k].served)
		}
	}
	l.Close()
	mu.Lock()
	defer mu.Unlock()
	if violation != nil {
		t.Fatal(violation)
	}
	t.Logf("%d activations; wakes: started %d, queued %d, coalesced %d, queue full %d", ran.Load(),
		results[Started].Load(), results[Queued].Load(), results[Coalesced].Load(), full.Load())
	if results[Started].Load() == 0 || results[Queued].Load() == 0 || results[Coalesced].Load() == 0 || full.Load() == 0 {
		t.Error("the stress did not reach every kind of wake answer")
	}
}
