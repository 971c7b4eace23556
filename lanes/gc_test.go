package lanes

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/rivus/collab/fsm"
)

// bigKey is a key that costs memory to keep: the lanes must not keep one
// whose lane went idle.
type bigKey [1 << 10]byte

// idler makes key's lane idle; exits hears each OnExit of key.
type idler func(t *testing.T, l *Lanes[*bigKey], key *bigKey, exits <-chan struct{})

// A key whose lane went idle is garbage once the caller drops it, however
// the lane went idle: its activation ended, Cancel dropped its wait, or the
// queue had no room for it. The forgotten lane goes to the reuse list
// (Lanes.free) without its key, and the dropped wake leaves no copy in the
// lanes' effects. (In the manner of client-go workqueue's
// TestGarbageCollection.)
func TestIdleLaneKeyCollected(t *testing.T) {
	tests := []struct {
		name          string
		maxConcurrent int
		maxQueued     int
		idle          idler
	}{
		{"ran", 2, 0, func(t *testing.T, l *Lanes[*bigKey], key *bigKey, exits <-chan struct{}) {
			wakeWant(t, l, key, Started)
			recv(t, exits, "the activation to end")
			// OnExit ran; Cancel returns once the lane has stepped past
			// the activation (the key owes nothing, so nothing drops).
			if err := l.Cancel(context.Background(), key); err != nil {
				t.Fatal(err)
			}
		}},
		{"dropped by Cancel", 1, 0, func(t *testing.T, l *Lanes[*bigKey], key *bigKey, exits <-chan struct{}) {
			wakeWant(t, l, key, Queued)
			if err := l.Cancel(context.Background(), key); err != nil {
				t.Fatal(err)
			}
			recv(t, exits, "the dropped wake's report")
		}},
		{"refused", 1, NoQueue, func(t *testing.T, l *Lanes[*bigKey], key *bigKey, _ <-chan struct{}) {
			wakeWant(t, l, key, ErrQueueFull)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// busy holds a slot throughout, so that the lane of the key
			// under test stays on the reuse list: no later wake takes it.
			busy := new(bigKey)
			exits := make(chan struct{}, 1)
			l := newLanes(t, Config[*bigKey]{
				MaxConcurrent: tt.maxConcurrent,
				MaxQueued:     tt.maxQueued,
				Activate: func(ctx context.Context, key *bigKey) error {
					if key == busy {
						<-ctx.Done()
					}
					return nil
				},
				OnExit: func(key *bigKey, _ Exit) {
					if key != busy {
						exits <- struct{}{}
					}
				},
			})
			wakeWant(t, l, busy, Started)
			collected := strand(t, l, tt.idle, exits)
			if monitoring {
				// The contract monitor keeps the keys of the last
				// monitorSteps steps for its report: push the key's
				// steps out with wakes of the busy lane.
				for range monitorSteps {
					if _, err := l.Wake(busy); err != nil && !errors.Is(err, ErrQueueFull) {
						t.Fatal(err)
					}
				}
			}
			if l.laneState(busy) == fsm.LaneIdle {
				t.Fatal("the busy lane went idle")
			}
			for range 20 {
				runtime.GC()
				select {
				case <-collected:
					return
				default:
				}
			}
			t.Fatal("a key whose lane went idle was not collected after 20 GCs")
		})
	}
}

// strand makes a key, lets idle make its lane idle, and returns a channel
// closed once the key is collected. The key is out of reach when it
// returns.
func strand(t *testing.T, l *Lanes[*bigKey], idle idler, exits <-chan struct{}) <-chan struct{} {
	t.Helper()
	collected := make(chan struct{})
	key := new(bigKey)
	runtime.AddCleanup(key, func(ch chan struct{}) { close(ch) }, collected)
	idle(t, l, key, exits)
	if s := l.laneState(key); s != fsm.LaneIdle {
		t.Fatalf("the key's lane is %v, want idle", s)
	}
	l.mu.Lock()
	pooled := len(l.free)
	l.mu.Unlock()
	if pooled != 1 {
		t.Fatalf("%d lanes on the reuse list, want the key's", pooled)
	}
	return collected
}
