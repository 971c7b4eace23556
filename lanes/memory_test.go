package lanes

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A lane's entry is deleted when it goes idle: after a million distinct
// keys have each run once, the map is empty before Close, and after it.
// The wakes outrun the activations, so the queue grows to hundreds of
// thousands of lanes: every queue operation must cost O(1).
func TestIdleLanesForgotten(t *testing.T) {
	const keys = 1_000_000
	var ran atomic.Int64
	l := newLanes(t, Config[int]{
		MaxConcurrent: 8,
		Activate: func(context.Context, int) error {
			ran.Add(1)
			return nil
		},
	})
	began := time.Now()
	deepest := 0
	for k := range keys {
		if _, err := l.Wake(k); err != nil {
			t.Fatalf("Wake(%d): %v", k, err)
		}
		if k%4096 == 0 {
			l.mu.Lock()
			deepest = max(deepest, l.queue.len())
			l.mu.Unlock()
		}
	}
	// Every wake is done, so no Add can race this Wait: it returns once
	// every activation, and the lane step after it, has finished.
	l.activations.Wait()
	t.Logf("%d keys woken and run in %v; the queue held up to %d lanes", keys, time.Since(began), deepest)
	if n := ran.Load(); n != keys {
		t.Errorf("%d activations ran, want %d", n, keys)
	}
	check := func(when string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if len(l.lanes) != 0 || l.queue.len() != 0 || l.running != 0 || l.reserved != 0 {
			t.Errorf("%s: %d lanes, %d waiting, %d running, %d reserved; want none",
				when, len(l.lanes), l.queue.len(), l.running, l.reserved)
		}
	}
	check("every key idle")
	l.Close()
	check("after Close")
}
