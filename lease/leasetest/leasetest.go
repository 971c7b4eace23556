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
//
// A repository whose storage outlives its handle, so that other handles
// and other processes can open it too, runs RunShared instead, which
// opens it by the directory it is kept in:
//
//	func TestMyRepository(t *testing.T) {
//		leasetest.RunShared(t, func(t *testing.T, dir string) store.Repository {
//			r := openMyRepository(dir)
//			t.Cleanup(func() { r.Close() })
//			return r
//		})
//	}
//
// A directory, rather than a string of the repository's own, because a
// child process must open the same repository: the suite makes the
// directory (t.TempDir) and hands its path to the child, so open is all
// the suite needs, in the test and in the child alike. A repository kept
// elsewhere, such as a database schema, records where in a file in dir.
//
// The child is the test binary again, running only the subtest that
// starts it (-test.run with its full name) with an environment variable
// naming dir; in it, RunShared holds a fence and runs nothing else. A
// test binary needs nothing added for it, but this: a TestMain, if any,
// must call m.Run (goleak.VerifyTestMain does), and the test, run alone
// by its name, must reach the same RunShared call.
package leasetest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/lease/store"
)

// Run checks the repositories that open returns, one fresh, empty
// repository per subtest; open registers any cleanup with the t it gets.
// The repository must wait on the real clock: the suite cannot move a
// fake one.
//
// It checks loading and creating, compare-and-swap on revisions (by 16
// goroutines at once, ten rounds over, and by two saves, one stopped at
// each of its looks at its context while the other runs), tombstones,
// keys that are hard to store (slash, "..", unicode, 256 bytes) and keys
// and snapshots that are invalid (a save of one fails and writes
// nothing), published values (kept whole, changed and cleared from save
// to save), contexts that have ended, fences (exclusion, cancelled waits,
// idempotent unlock, a holder whose context ends and whose waiters give
// up, as when its lease is lost), if the repository implements
// store.BatchSaver, batches, and if it implements store.Watcher (and can
// watch), that a tombstone wakes the watch of its key and only of it.
func Run(t *testing.T, open func(t *testing.T) store.Repository) {
	t.Helper()
	run(t, open)
}

// RunShared runs Run's checks on repositories that open opens in a fresh
// directory each, and then checks handles that share one. open(t, dir)
// opens a handle on the repository kept in dir, creating it if dir is
// empty, and registers its cleanup with t. The suite opens a directory's
// first handle itself, before any other process does.
//
// Besides Run's checks, it races saves through several handles, stops a
// save through one handle while another saves, and checks that a fence
// held through one handle, or in another process (see the package
// documentation), keeps the others out until it is unlocked, and until
// its process is killed, which must free it, and that a tombstone saved
// through one handle wakes a watch through another.
func RunShared(t *testing.T, open func(t *testing.T, dir string) store.Repository) {
	t.Helper()
	if dir := os.Getenv(holderEnv); dir != "" {
		// This process is a child of FenceOtherProcess.
		t.Run(otherProcess, func(t *testing.T) { holdFence(t, dir, open) })
		return
	}
	run(t, func(t *testing.T) store.Repository { return open(t, t.TempDir()) })
	for _, tc := range []sharedSubtest{
		{"ConcurrentSavesHandles", testConcurrentSavesHandles},
		{"InterleavedSavesHandles", testInterleavedSavesHandles},
		{"FenceOtherHandle", testFenceOtherHandle},
		{"WatchFreedHandles", testWatchFreedHandles},
		{otherProcess, testFenceOtherProcess},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, t.TempDir(), open) })
	}
}

func run(t *testing.T, open func(t *testing.T) store.Repository) {
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
		{"PublishedValue", testPublishedValue},
		{"WatchFreed", testWatchFreed},
		{"EndedContext", testEndedContext},
		{"ConcurrentSavesOneWins", testConcurrentSavesOneWins},
		{"InterleavedSavesOneWins", testInterleavedSavesOneWins},
		{"FenceExcludes", testFenceExcludes},
		{"FenceMutualExclusion", testFenceMutualExclusion},
		{"FenceKeysIndependent", testFenceKeysIndependent},
		{"FenceCancelled", testFenceCancelled},
		{"FenceUnlockIdempotent", testFenceUnlockIdempotent},
		{"FenceHeldThroughLoss", testFenceHeldThroughLoss},
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

// sharedSubtest is one test of RunShared's, run on handles that open
// opens on the fresh repository in dir.
type sharedSubtest struct {
	name string
	test func(t *testing.T, dir string, open func(*testing.T, string) store.Repository)
}

// handles is how many handles on one repository the shared races use.
const handles = 4

// testConcurrentSavesHandles is ConcurrentSavesOneWins with the goroutines
// spread over handles. A handle may queue its own saves in memory before
// it takes the lock that other handles see (the file store does, before
// its lock file), which keeps one handle's goroutines apart whatever that
// lock is; only saves through other handles race through it.
func testConcurrentSavesHandles(t *testing.T, dir string, open func(*testing.T, string) store.Repository) {
	repos := make([]store.Repository, handles)
	for i := range repos {
		repos[i] = open(t, dir)
	}
	raceRevisions(t, repos)
}

// testInterleavedSavesHandles is InterleavedSavesOneWins with the saves
// through two handles.
func testInterleavedSavesHandles(t *testing.T, dir string, open func(*testing.T, string) store.Repository) {
	interleaveSaves(t, open(t, dir), open(t, dir))
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
		Value:      value(gen),
	}
}

// value is the published value of snapshot(gen): none, a short one, or
// the longest, of two-byte characters, so that a store that drops,
// keeps or truncates values shows it.
func value(gen store.Token) string {
	switch gen % 3 {
	case 1:
		return ""
	case 2:
		return fmt.Sprintf("10.0.0.%d:8080 ü", gen)
	}
	return strings.Repeat("é", store.MaxValueLen/2)
}

func equalSnapshots(a, b store.Snapshot) bool {
	return a.Generation == b.Generation && a.Holder == b.Holder && a.Released == b.Released && a.Broken == b.Broken &&
		a.RenewedAt.Equal(b.RenewedAt) && a.TTL == b.TTL && a.Value == b.Value
}
