package lease_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/platform"
)

// timeNow returns a time with a monotonic reading.
func timeNow() time.Time { return time.Now() }

func sampleSnapshot() lease.Snapshot {
	return lease.Snapshot{
		Generation: 3,
		Holder:     platform.Identity{Host: "h", BootID: "b", PID: 42, StartTime: 9, PIDNamespace: 7},
		Released:   true,
		RenewedAt:  time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		TTL:        90 * time.Second,
	}
}

// TestSnapshotJSONIsStable: the stored form, field names and order
// included, is part of the contract with other versions.
func TestSnapshotJSONIsStable(t *testing.T) {
	got, err := json.Marshal(sampleSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"generation":3,"holder":{"host":"h","bootId":"b","pid":42,"startTime":9,"pidNamespace":7},` +
		`"released":true,"renewedAt":"2026-01-02T03:04:05.000000006Z","ttl":"1m30s"}`
	if string(got) != want {
		t.Fatalf("json.Marshal =\n%s\nwant\n%s", got, want)
	}
	var back lease.Snapshot
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if s := sampleSnapshot(); back.Generation != s.Generation || back.Holder != s.Holder || back.Released != s.Released ||
		!back.RenewedAt.Equal(s.RenewedAt) || back.TTL != s.TTL {
		t.Fatalf("round trip = %+v, want %+v", back, s)
	}
}

func TestSnapshotUnmarshalRejects(t *testing.T) {
	for _, doc := range []string{
		`{"generation":1}`,
		`{"generation":1,"ttl":""}`,
		`{"generation":1,"ttl":"soon"}`,
		`{"generation":-1,"ttl":"1s"}`,
		`{"generation":1,"ttl":"1s","renewedAt":"yesterday"}`,
		`{"generation":1,"ttl":"1s","holder":"me"}`,
		`[]`,
	} {
		var s lease.Snapshot
		if err := json.Unmarshal([]byte(doc), &s); err == nil {
			t.Errorf("Unmarshal(%s) = %+v, want an error", doc, s)
		}
	}
	var s lease.Snapshot
	if err := json.Unmarshal([]byte(`{"generation":2,"ttl":"1s","futureField":true}`), &s); err != nil || s.Generation != 2 {
		t.Errorf("a snapshot with an unknown field = %+v, %v; want it read", s, err)
	}
	if err := json.Unmarshal([]byte(`{"generation":2,"ttl":"1s"}`+strings.Repeat(" ", 3)), &s); err != nil {
		t.Errorf("trailing space: %v", err)
	}
}
