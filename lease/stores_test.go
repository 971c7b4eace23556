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
			// One round's goroutines may happen to run one after
			// another; a broken compare-and-swap shows in some round.
			var base store.Revision
			for round := range raceRounds {
				rev, err := handles[0].Save(t.Context(), "k", repotest.Snap(lease.Token(100*round+1)), base)
				if err != nil {
					t.Fatal(err)
				}
				if wins := raceOneRevision(t, handles, rev, lease.Token(100*round+10)); wins != 1 {
					t.Fatalf("round %d: %d saves over one revision won, want 1", round, wins)
				}
				rec, _, err := handles[1].Load(t.Context(), "k")
				if err != nil {
					t.Fatal(err)
				}
				base = rec.Revision
			}
		})
	}
}

// raceRounds is how many rounds TestTwoHandlesRace races.
const raceRounds = 20

// raceOneRevision has 16 goroutines save over base at once through
// handles, in turn, and returns how many won.
func raceOneRevision(t *testing.T, handles [2]store.Repository, base store.Revision, firstGen lease.Token) int {
	t.Helper()
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 16 {
		wg.Go(func() {
			<-start
			_, err := handles[i%2].Save(t.Context(), "k", repotest.Snap(firstGen+lease.Token(i)), base)
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
	return wins
}
