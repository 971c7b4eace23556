package leasetest

import (
	"context"
	"errors"
	"testing"

	"github.com/rivus/collab/lease/store"
)

// testBatchSaver: each write of a batch succeeds or fails on its own, in
// order, as Save would one by one.
func testBatchSaver(t *testing.T, r store.Repository) {
	b := r.(store.BatchSaver) // Run adds this test only for batching repositories
	t.Run("per write", func(t *testing.T) { testBatchPerWrite(t, r, b) })
	t.Run("empty", func(t *testing.T) {
		revs, errs := b.SaveBatch(t.Context(), nil)
		if len(revs) != 0 || len(errs) != 0 {
			t.Fatalf("SaveBatch(nil) = %v, %v; want no results", revs, errs)
		}
	})
	t.Run("ended context", func(t *testing.T) {
		cause := errors.New("caller gave up")
		ctx, cancel := context.WithCancelCause(t.Context())
		cancel(cause)
		revs, errs := b.SaveBatch(ctx, []store.Write{{Key: "x", Snapshot: snapshot(1)}, {Key: "y", Snapshot: snapshot(2)}})
		if len(revs) != 2 || len(errs) != 2 {
			t.Fatalf("SaveBatch returned %d revisions and %d errors for 2 writes", len(revs), len(errs))
		}
		for i, err := range errs {
			if !errors.Is(err, cause) {
				t.Errorf("write %d with an ended context: %v, want its cause", i, err)
			}
		}
		wantNoRecord(t, r, "x")
		wantNoRecord(t, r, "y")
	})
}

func testBatchPerWrite(t *testing.T, r store.Repository, b store.BatchSaver) {
	revA := mustSave(t, r, "a", snapshot(1), 0)
	revC := mustSave(t, r, "c", snapshot(3), 0)
	writes := []store.Write{
		{Key: "a", Snapshot: snapshot(11), Expected: revA},      // applied
		{Key: "b", Snapshot: snapshot(12), Expected: 0},         // applied: created
		{Key: "c", Snapshot: snapshot(13), Expected: revC + 99}, // conflict
		{Key: "", Snapshot: snapshot(14), Expected: 0},          // invalid key
		{Key: "a", Snapshot: snapshot(15), Expected: revA},      // conflict: the first write moved a
		{Key: "d", Snapshot: snapshot(16), Expected: 5},         // conflict: no record
	}
	revs, errs := b.SaveBatch(t.Context(), writes)
	if len(revs) != len(writes) || len(errs) != len(writes) {
		t.Fatalf("SaveBatch returned %d revisions and %d errors for %d writes", len(revs), len(errs), len(writes))
	}
	for i := range 2 {
		if errs[i] != nil || revs[i] == 0 {
			t.Fatalf("write %d (%q): revision %d, %v; want it applied", i, writes[i].Key, revs[i], errs[i])
		}
	}
	if revs[0] == revA {
		t.Fatalf("write 0 kept revision %d", revA)
	}
	wantConflict(t, errs[2], "c", revC+99, revC)
	wantKeyError(t, "SaveBatch", errs[3], "")
	wantConflict(t, errs[4], "a", revA, revs[0])
	wantConflict(t, errs[5], "d", 5, 0)
	wantRecord(t, r, "a", snapshot(11), revs[0])
	wantRecord(t, r, "b", snapshot(12), revs[1])
	wantRecord(t, r, "c", snapshot(3), revC)
	wantNoRecord(t, r, "d")
}
