package lease_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform/platformtest"
)

// TestPublishedValue: a value acquired with WithValue is in the record
// from the claim on and in every renewal, and not in the release's
// tombstone; a lease acquired without one publishes none, also over a
// record that had one.
func TestPublishedValue(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		m, rec := newManager(t, f.Platform, repo)
		const addr = "10.0.0.7:8080 ü"
		h, err := m.AcquireWait(t.Context(), "k", lease.WithValue(addr))
		if err != nil {
			t.Fatal(err)
		}
		if h.Value() != addr {
			t.Fatalf("Value() = %q, want %q", h.Value(), addr)
		}
		if s := mustLoad(t, repo, "k").Snapshot; s.Value != addr {
			t.Fatalf("claimed record's value = %q, want %q", s.Value, addr)
		}
		for i := 1; i <= 2; i++ {
			step(t, f.Clock, hb)
			rec.waitCount(t, lease.Renewed, i)
			if s := mustLoad(t, repo, "k").Snapshot; s.Value != addr || s.Generation != h.Token() {
				t.Fatalf("renewal %d wrote %+v, want the value %q", i, s, addr)
			}
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		if s := mustLoad(t, repo, "k").Snapshot; !s.Released || s.Value != "" {
			t.Fatalf("tombstone = %+v, want it released with no value", s)
		}
		h = mustAcquire(t, m, "k")
		if s := mustLoad(t, repo, "k").Snapshot; h.Value() != "" || s.Value != "" {
			t.Fatalf("a lease without a value: Value() %q, record %+v", h.Value(), s)
		}
	})
}

// TestPublishedValueInvalid: a value no record can hold is refused
// before anything is read or written, as a *store.SnapshotFieldError
// naming the field.
func TestPublishedValueInvalid(t *testing.T) {
	f := platformtest.New(t)
	repo := lease.NewMemoryRepository()
	m, _ := newManager(t, f.Platform, repo)
	for _, v := range []string{strings.Repeat("v", store.MaxValueLen+1), "a\x00b", "\xc3("} {
		for name, acquire := range map[string]func() (*lease.Lease, error){
			"Acquire":     func() (*lease.Lease, error) { return m.Acquire(t.Context(), "k", lease.WithValue(v)) },
			"AcquireWait": func() (*lease.Lease, error) { return m.AcquireWait(t.Context(), "k", lease.WithValue(v)) },
		} {
			h, err := acquire()
			var fe *store.SnapshotFieldError
			if h != nil || !errors.As(err, &fe) || fe.Field != "value" {
				t.Fatalf("%s with value %.20q = %v, %v; want a *store.SnapshotFieldError for value", name, v, h, err)
			}
			if _, ok, err := repo.Load(t.Context(), "k"); ok || err != nil {
				t.Fatalf("%s with an invalid value wrote a record (%v)", name, err)
			}
		}
	}
}
