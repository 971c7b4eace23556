// Package leasetest is the conformance suite of lease/store.Repository:
// every repository of this module runs it (the memory one, lease/sqlite,
// lease/file and lease/postgres), and so can a repository of yours.
//
//	func TestMyRepository(t *testing.T) {
//		leasetest.Run(t, func(t *testing.T) store.Repository {
//			r := openMyRepository(t.TempDir())
//			t.Cleanup(func() { r.Close() })
//			return r
//		})
//	}
package leasetest

import (
	"testing"
	"time"

	"github.com/rivus/collab/lease/store"
)

// Run checks the repositories that open returns, one fresh, empty
// repository per subtest; open registers any cleanup with the t it gets.
// The repository must wait on the real clock: the suite cannot move a
// fake one.
//
// It checks loading and creating, compare-and-swap on revisions (also by
// 16 goroutines at once, ten rounds over), tombstones, keys that are hard to store (slash,
// "..", unicode, 256 bytes) and keys and snapshots that are invalid (a
// save of one fails and writes nothing), contexts that have
// ended, fences (exclusion, cancelled waits, idempotent unlock), and, if
// the repository implements store.BatchSaver, batches.
func Run(t *testing.T, open func(t *testing.T) store.Repository) {
	t.Helper()
	tests := []subtest{
		{"LoadMissing", testLoadMissing},
		{"CreateWithZero", testCreateWithZero},
		{"CreateTwiceConflicts", testCreateTwiceConflicts},
		{"SaveOverRevision", testSaveOverRevision},
		{"StaleRevisionConflicts", testStaleRevisionConflicts},
		{"TombstoneRoundTrip", testTombstoneRoundTrip},
		{"ManyKeysIndependent", testManyKeysIndependent},
		{"AwkwardKeys", testAwkwardKeys},
		{"InvalidKeys", testInvalidKeys},
		{"InvalidSnapshots", testInvalidSnapshots},
		{"EndedContext", testEndedContext},
		{"ConcurrentSavesOneWins", testConcurrentSavesOneWins},
		{"FenceExcludes", testFenceExcludes},
		{"FenceMutualExclusion", testFenceMutualExclusion},
		{"FenceKeysIndependent", testFenceKeysIndependent},
		{"FenceCancelled", testFenceCancelled},
		{"FenceUnlockIdempotent", testFenceUnlockIdempotent},
	}
	// The batch subtests run only for repositories that can batch.
	if _, ok := open(t).(store.BatchSaver); ok {
		tests = append(tests, subtest{"BatchSaver", testBatchSaver})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open(t)) })
	}
}

// subtest is one test of the suite, run on a fresh repository.
type subtest struct {
	name string
	test func(*testing.T, store.Repository)
}

// wait bounds every wait that should end promptly, so that a broken
// repository fails the test instead of hanging it.
const wait = 30 * time.Second

// heldProbe is how long a Fence call must keep waiting to show that
// the fence is still held. A broken fence returns at once, so the probe
// fails it however short the probe; a slow machine can only make it pass.
const heldProbe = 50 * time.Millisecond

// snapshot returns a distinct snapshot for gen, with a time zone and
// nanoseconds that storage must keep.
func snapshot(gen store.Token) store.Snapshot {
	return store.Snapshot{
		Generation: gen,
		Holder:     holder(int(gen)),
		RenewedAt:  time.Date(2026, 3, 4, 5, 6, 7, 890123456, time.FixedZone("UTC+2", 2*3600)).Add(time.Duration(gen) * time.Second),
		TTL:        time.Duration(gen)*time.Second + 30*time.Second,
	}
}

func equalSnapshots(a, b store.Snapshot) bool {
	return a.Generation == b.Generation && a.Holder == b.Holder && a.Released == b.Released &&
		a.RenewedAt.Equal(b.RenewedAt) && a.TTL == b.TTL
}
