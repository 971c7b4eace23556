package file_test

import (
	"testing"

	"github.com/rivus/collab/lease/leasetest"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// BenchmarkAcquireWait: release to takeover latency on the file store
// (see leasetest.BenchmarkAcquireWait).
func BenchmarkAcquireWait(b *testing.B) {
	leasetest.BenchmarkAcquireWait(b, func(b *testing.B) store.Repository { return openRepo(b, platform.OS(), b.TempDir()) })
}
