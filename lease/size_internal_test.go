package lease

import (
	"testing"
	"time"
	"unsafe"
)

// TestLeaseCarriesNoMonitorState: a production handle carries a nil
// pointer where a monitored build keeps the contract monitor's notes.
func TestLeaseCarriesNoMonitorState(t *testing.T) {
	size, notes := unsafe.Sizeof(Lease{}), unsafe.Sizeof(leaseMonitor{})
	t.Logf("a Lease is %d bytes; the monitor's notes, kept apart, %d", size, notes)
	if size >= notes {
		t.Errorf("a Lease is %d bytes, no smaller than the %d of the monitor's notes: are they inline again?", size, notes)
	}
	m, err := NewManager(Config{TTL: time.Minute, Heartbeat: time.Second, Repository: NewMemoryRepository()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	h, err := m.Acquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if (h.mon != nil) != monitoring {
		t.Errorf("a handle of a build with monitoring %v has monitor notes: %v", monitoring, h.mon != nil)
	}
}
