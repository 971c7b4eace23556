package postgres_test

import (
	"testing"

	"github.com/rivus/collab/lease/leasetest"
	"github.com/rivus/collab/lease/store"
)

// BenchmarkAcquireWait: release to takeover latency on PostgreSQL (see
// leasetest.BenchmarkAcquireWait); it needs COLLAB_TEST_POSTGRES_URL.
func BenchmarkAcquireWait(b *testing.B) {
	leasetest.BenchmarkAcquireWait(b, func(b *testing.B) store.Repository { return openRepo(b, newSchema(b)) })
}
