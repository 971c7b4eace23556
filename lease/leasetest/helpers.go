package leasetest

import (
	"context"
	"errors"
	"testing"

	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// holder returns a process identity told apart by n.
func holder(n int) platform.Identity {
	return platform.Identity{Host: "leasetest", BootID: "b7c1e0d2-leasetest", PID: 1000 + n, StartTime: uint64(5000 + n), PIDNamespace: 4026531836}
}

func mustSave(t *testing.T, r store.Repository, key string, s store.Snapshot, expected store.Revision) store.Revision {
	t.Helper()
	rev, err := r.Save(t.Context(), key, s, expected)
	if err != nil {
		t.Fatalf("Save(%q, generation %d, over %d): %v", key, s.Generation, expected, err)
	}
	if rev == 0 {
		t.Fatalf("Save(%q, generation %d, over %d) returned revision 0", key, s.Generation, expected)
	}
	return rev
}

// wantRecord checks that key holds s under rev.
func wantRecord(t *testing.T, r store.Repository, key string, s store.Snapshot, rev store.Revision) {
	t.Helper()
	rec, ok, err := r.Load(t.Context(), key)
	switch {
	case err != nil:
		t.Fatalf("Load(%q): %v", key, err)
	case !ok:
		t.Fatalf("Load(%q) found no record, want revision %d", key, rev)
	case rec.Revision != rev:
		t.Fatalf("Load(%q) revision = %d, want %d", key, rec.Revision, rev)
	case !equalSnapshots(rec.Snapshot, s):
		t.Fatalf("Load(%q) = %+v, want %+v", key, rec.Snapshot, s)
	}
}

// wantNoRecord checks that key has no record.
func wantNoRecord(t *testing.T, r store.Repository, key string) {
	t.Helper()
	rec, ok, err := r.Load(t.Context(), key)
	if err != nil || ok {
		t.Fatalf("Load(%q) = %+v, %v, %v; want no record", key, rec, ok, err)
	}
}

// wantConflict checks that err is a revision conflict on key with the
// given revisions, matched both ways callers match it.
func wantConflict(t *testing.T, err error, key string, expected, actual store.Revision) {
	t.Helper()
	var c *store.RevisionConflictError
	if !errors.As(err, &c) {
		t.Fatalf("got %v, want a *store.RevisionConflictError", err)
	}
	if c.Key != key || c.Expected != expected || c.Actual != actual {
		t.Fatalf("conflict = %+v, want key %q, expected %d, actual %d", *c, key, expected, actual)
	}
	if !errors.Is(err, store.ErrRevisionConflict) {
		t.Fatalf("errors.Is(%v, ErrRevisionConflict) = false", err)
	}
}

// wantKeyError checks that err is a *store.KeyError for key.
func wantKeyError(t *testing.T, what string, err error, key string) {
	t.Helper()
	var ke *store.KeyError
	if !errors.As(err, &ke) || ke.Key != key || ke.Reason == "" {
		t.Fatalf("%s(%q) = %v, want a *store.KeyError for the key, with a reason", what, key, err)
	}
	if !errors.Is(err, store.ErrInvalidKey) {
		t.Fatalf("errors.Is(%v, ErrInvalidKey) = false", err)
	}
}

// fenceNow takes key's fence, which should be free or soon so.
func fenceNow(t *testing.T, r store.Repository, key string) func() {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	unlock, err := r.Fence(ctx, key)
	if err != nil {
		t.Fatalf("Fence(%q) on a free fence: %v", key, err)
	}
	if unlock == nil {
		t.Fatalf("Fence(%q) returned a nil unlock", key)
	}
	return unlock
}

// wantFenceHeld checks that a Fence call on key keeps waiting for
// heldProbe and then returns its context's error, holding nothing.
func wantFenceHeld(t *testing.T, r store.Repository, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), heldProbe)
	defer cancel()
	unlock, err := r.Fence(ctx, key)
	if err == nil {
		unlock()
		t.Fatalf("Fence(%q) returned while another caller held the fence", key)
	}
	if !errors.Is(err, context.DeadlineExceeded) || unlock != nil {
		t.Fatalf("Fence(%q) on a held fence with an expiring context = %v (unlock %v), want context.DeadlineExceeded and no unlock", key, err, unlock != nil)
	}
}
