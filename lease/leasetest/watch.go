package leasetest

import (
	"testing"
	"time"

	"github.com/rivus/collab/lease/store"
)

// watchOf returns r's watch of key's tombstones, or false when r cannot
// watch (it is no store.Watcher, or says it cannot watch key now, which
// the contract allows: its waiters poll).
func watchOf(t *testing.T, r store.Repository, key string) (<-chan struct{}, bool) {
	t.Helper()
	w, ok := r.(store.Watcher)
	if !ok {
		return nil, false
	}
	// A first watch, stopped twice (stop is idempotent), then the one
	// the test uses.
	_, stop, err := w.WatchFreed(t.Context(), key)
	if err != nil {
		t.Logf("%T cannot watch %q: %v", r, key, err)
		return nil, false
	}
	stop()
	stop()
	freed, stop, err := w.WatchFreed(t.Context(), key)
	if err != nil {
		t.Fatalf("a second WatchFreed of %q: %v", key, err)
	}
	t.Cleanup(stop)
	return freed, true
}

// wantFreed waits for a wake of freed, which must come without the test
// moving anything: a minute is a failure, not a pace.
func wantFreed(t *testing.T, freed <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-freed:
	case <-time.After(wait):
		t.Fatalf("no wake of the watch after %s", what)
	}
}

// testWatchFreed: a watch of a key wakes after a tombstone of it is
// saved, alone or in a batch, and not after a tombstone of another key.
func testWatchFreed(t *testing.T, r store.Repository) {
	freed, ok := watchOf(t, r, "k")
	if !ok {
		return
	}
	rev := mustSave(t, r, "k", snapshot(1), 0)
	other := snapshot(1)
	other.Released = true
	mustSave(t, r, "other", other, 0)
	select {
	case <-freed:
		t.Fatal("the watch of k woke at a holder's save of k or a tombstone of another key")
	case <-time.After(heldProbe):
	}
	tomb := snapshot(1)
	tomb.Released = true
	rev = mustSave(t, r, "k", tomb, rev)
	wantFreed(t, freed, "a tombstone's save")
	b, ok := r.(store.BatchSaver)
	if !ok {
		return
	}
	held, tomb2 := snapshot(2), snapshot(2)
	tomb2.Released = true
	rev = mustSave(t, r, "k", held, rev)
	if _, errs := b.SaveBatch(t.Context(), []store.Write{{Key: "k", Snapshot: tomb2, Expected: rev}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	wantFreed(t, freed, "a tombstone saved in a batch")
}

// testWatchFreedHandles: a tombstone saved through one handle wakes the
// watch of another handle on the same repository.
func testWatchFreedHandles(t *testing.T, dir string, open func(*testing.T, string) store.Repository) {
	watcher, writer := open(t, dir), open(t, dir)
	freed, ok := watchOf(t, watcher, "k")
	if !ok {
		return
	}
	tomb := snapshot(1)
	tomb.Released = true
	mustSave(t, writer, "k", tomb, 0)
	wantFreed(t, freed, "a tombstone saved through another handle")
}
