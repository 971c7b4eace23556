package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/rivus/collab/lease/internal/repotest"
	"github.com/rivus/collab/lease/leasetest"
	"github.com/rivus/collab/lease/store"
	platformsqlite "github.com/rivus/collab/platform/sqlite"
)

// BenchmarkAcquireWait: release to takeover latency on SQLite (see
// leasetest.BenchmarkAcquireWait).
func BenchmarkAcquireWait(b *testing.B) {
	leasetest.BenchmarkAcquireWait(b, func(b *testing.B) store.Repository {
		return repotest.OpenSQLite(b, platformsqlite.OS(), filepath.Join(b.TempDir(), "leases.db"))
	})
}
