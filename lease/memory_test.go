package lease_test

import (
	"testing"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/leasetest"
)

func TestMemoryRepository(t *testing.T) {
	leasetest.Run(t, func(t *testing.T) lease.Repository { return lease.NewMemoryRepository() })
}

// TestMemoryRepositoryStripsMonotonic: a stored snapshot keeps the wall
// clock only, as the persistent repositories do.
func TestMemoryRepositoryStripsMonotonic(t *testing.T) {
	r := lease.NewMemoryRepository()
	s := lease.Snapshot{Generation: 1, Holder: stranger, RenewedAt: timeNow(), TTL: 1}
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
