package lease_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/internal/repotest"
	"github.com/rivus/collab/lease/store"
	platformsqlite "github.com/rivus/collab/platform/sqlite"
)

// TestTwoHandlesRace: goroutines saving over one revision through two
// handles (each with its own in-process queue) still have one winner.
func TestTwoHandlesRace(t *testing.T) {
	for _, kind := range repoKinds {
		t.Run(kind, func(t *testing.T) {
			path := repoPath(t.TempDir(), kind)
			var handles [2]store.Repository
			for i := range handles {
				r, closeRepo, err := openKind(platformsqlite.OS(), kind, path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = closeRepo() })
				handles[i] = r
			}
			base, err := handles[0].Save(t.Context(), "k", repotest.Snap(1), 0)
			if err != nil {
				t.Fatal(err)
			}
			start := make(chan struct{})
			var wg sync.WaitGroup
			var mu sync.Mutex
			wins := 0
			for i := range 16 {
				wg.Go(func() {
					<-start
					_, err := handles[i%2].Save(t.Context(), "k", repotest.Snap(lease.Token(10+i)), base)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						wins++
					case !errors.Is(err, store.ErrRevisionConflict):
						t.Errorf("save: %v", err)
					}
				})
			}
			close(start)
			wg.Wait()
			if wins != 1 {
				t.Fatalf("%d saves over one revision won, want 1", wins)
			}
		})
	}
}
