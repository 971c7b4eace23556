package lanes

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/rivus/collab/fsm"
)

// An activation's slot passes on only after it returned and OnExit ran
// for it, whether it ended by itself or was interrupted: the next key's
// activation sees the previous OnExit completed.
func TestSlotPassesAfterOnExit(t *testing.T) {
	for _, how := range []string{"returns", "cancelled"} {
		t.Run(how, func(t *testing.T) {
			var aDone atomic.Bool
			inOnExit := make(chan struct{})
			releaseOnExit := make(chan struct{})
			bSaw := make(chan bool, 1)
			releaseA := make(chan struct{})
			l := newLanes(t, Config[string]{
				Activate: func(ctx context.Context, key string) error {
					if key == "b" {
						bSaw <- aDone.Load()
						return nil
					}
					select {
					case <-releaseA:
					case <-ctx.Done():
					}
					return nil
				},
				OnExit: func(key string, _ Exit) {
					if key == "a" {
						close(inOnExit)
						<-releaseOnExit
						aDone.Store(true)
					}
				},
			})
			unblockOnExit := unblocker(t, releaseOnExit)
			unblockA := unblocker(t, releaseA)
			wakeWant(t, l, "a", Started)
			wakeWant(t, l, "b", Queued)
			cancelled := make(chan error, 1)
			if how == "returns" {
				unblockA()
			} else {
				go func() { cancelled <- l.Cancel(context.Background(), "a") }()
			}
			recv(t, inOnExit, "OnExit of a")
			// a returned, its OnExit runs: the slot is still a's.
			s := l.snapshot()
			if s.running != 1 || s.states["b"] != fsm.LaneWaiting {
				t.Errorf("while a's OnExit runs: %d running, b %v; want 1 running, b Waiting", s.running, s.states["b"])
			}
			notYet(t, bSaw, "b's activation while a's OnExit runs")
			unblockOnExit()
			if !recv(t, bSaw, "b's activation") {
				t.Error("b's activation started before a's OnExit completed")
			}
			if how == "cancelled" {
				if err := recv(t, cancelled, "Cancel"); err != nil {
					t.Errorf("Cancel: %v", err)
				}
			}
		})
	}
}
