package torture

import (
	"sync"
	"testing"

	"github.com/rivus/collab/platform/sqlite"
)

// TestSQLiteStoresOpenTogether: workers that start at once all open the
// run's SQLite stores, though their first set-up meets the others'.
func TestSQLiteStoresOpenTogether(t *testing.T) {
	for range 30 {
		dir := t.TempDir()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				repo, res, err := openSQLiteStores(sqlite.OS(), dir)
				if err != nil {
					t.Error(err)
					return
				}
				if err := res.Close(); err != nil {
					t.Error(err)
				}
				if err := repo.Close(); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
}
