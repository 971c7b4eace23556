package lease_test

import (
	"testing"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/leasetest"
	"github.com/rivus/collab/lease/store"
	"time"
)

func TestMemoryRepository(t *testing.T) {
	leasetest.Run(t, func(t *testing.T) store.Repository { return lease.NewMemoryRepository() })
}

// TestMemoryRepositoryStripsMonotonic: a stored snapshot keeps the wall
// clock only, as the persistent repositories do.
func TestMemoryRepositoryStripsMonotonic(t *testing.T) {
	r := lease.NewMemoryRepository()
	s := store.Snapshot{Generation: 1, Holder: stranger, RenewedAt: time.Now(), TTL: 1}
	if _, err := r.Save(t.Context(), "k", s, 0); err != nil {
		t.Fatal(err)
	}
	rec, _, err := r.Load(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Snapshot.RenewedAt != s.RenewedAt.Round(0) {
		t.Fatalf("stored RenewedAt = %#v, want the wall clock reading of %#v", rec.Snapshot.RenewedAt, s.RenewedAt)
	}
}
