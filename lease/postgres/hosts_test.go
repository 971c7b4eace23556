package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform/platformtest"
)

const (
	ttl = 4 * time.Second
	hb  = time.Second
)

// TestHostsJudgedByTTL: a manager on another host (another boot id, and
// a process there with the holder's pid) cannot probe the holder, so it
// takes over only TTL after it first saw the holder's record, on its own
// clock; the silent holder then loses the lease at its next renewal.
func TestHostsJudgedByTTL(t *testing.T) {
	schema := newSchema(t)
	hostA, hostB := platformtest.New(t), platformtest.New(t)
	hostB.Processes.SetHost("host-b")
	hostB.Processes.Reboot()
	selfA, _ := hostA.Processes.Self()
	selfB, _ := hostB.Processes.Self()
	if selfA.BootID == selfB.BootID || selfA.PID != selfB.PID {
		t.Fatalf("hosts %v and %v: want other boot ids and one pid", selfA, selfB)
	}
	holder := newManager(t, hostA, openRepo(t, schema))
	held, err := holder.Acquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	observer := newManager(t, hostB, openRepo(t, schema))
	for _, d := range []time.Duration{0, ttl / 2, ttl/2 - time.Nanosecond} {
		hostB.Clock.Advance(d)
		_, err := observer.Acquire(t.Context(), "k")
		var he *lease.HeldError
		if !errors.As(err, &he) || he.Holder == nil || *he.Holder != selfA {
			t.Fatalf("Acquire on host b before the TTL = %v, want a *HeldError naming %v", err, selfA)
		}
	}
	hostB.Clock.Advance(time.Nanosecond)
	taken, err := observer.Acquire(t.Context(), "k")
	if err != nil {
		t.Fatalf("Acquire on host b at the TTL: %v", err)
	}
	defer taken.Close()
	if taken.Token() != held.Token()+1 {
		t.Fatalf("token %d after takeover, want %d", taken.Token(), held.Token()+1)
	}
	renewUntilLost(t, hostA.Clock, held)
	select {
	case <-taken.Lost():
		t.Fatalf("the new holder lost its lease: %v", taken.Err())
	default:
	}
}

// newManager returns a manager on host, closed when the test ends.
func newManager(t *testing.T, host *platformtest.Fake, repo store.Repository) *lease.Manager {
	t.Helper()
	m, err := lease.NewManager(lease.Config{TTL: ttl, Heartbeat: hb, Repository: repo, Platform: host.Platform})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// renewUntilLost advances clock by a heartbeat once the manager has
// armed its renewal timer, and waits for the renewal to find the lease
// taken over.
func renewUntilLost(t *testing.T, clock *platformtest.Clock, h *lease.Lease) {
	t.Helper()
	if err := clock.WaitForTimers(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(hb)
	select {
	case <-h.Lost():
	case <-time.After(30 * time.Second):
		t.Fatal("the old holder kept its lease after another host took it over")
	}
	if !errors.Is(h.Err(), lease.ErrLost) {
		t.Fatalf("Err() = %v, want ErrLost", h.Err())
	}
}
