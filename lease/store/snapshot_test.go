package store_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

func sampleSnapshot() store.Snapshot {
	return store.Snapshot{
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
	var back store.Snapshot
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if s := sampleSnapshot(); back.Generation != s.Generation || back.Holder != s.Holder || back.Released != s.Released ||
		!back.RenewedAt.Equal(s.RenewedAt) || back.TTL != s.TTL {
		t.Fatalf("round trip = %+v, want %+v", back, s)
	}
	// A broken tombstone says so; others leave the field out, as the
	// versions before it wrote them.
	broken := sampleSnapshot()
	broken.Broken = true
	got, err = json.Marshal(broken)
	if err != nil {
		t.Fatal(err)
	}
	const wantBroken = `{"generation":3,"holder":{"host":"h","bootId":"b","pid":42,"startTime":9,"pidNamespace":7},` +
		`"released":true,"broken":true,"renewedAt":"2026-01-02T03:04:05.000000006Z","ttl":"1m30s"}`
	if string(got) != wantBroken {
		t.Fatalf("json.Marshal of a broken tombstone =\n%s\nwant\n%s", got, wantBroken)
	}
	if err := json.Unmarshal(got, &back); err != nil || !back.Broken {
		t.Fatalf("round trip of a broken tombstone = %+v, %v", back, err)
	}
	// A published value is the last field; the records of versions
	// before it have none, and read as "".
	valued := sampleSnapshot()
	valued.Released, valued.Value = false, "10.0.0.7:8080 ü"
	got, err = json.Marshal(valued)
	if err != nil {
		t.Fatal(err)
	}
	const wantValued = `{"generation":3,"holder":{"host":"h","bootId":"b","pid":42,"startTime":9,"pidNamespace":7},` +
		`"released":false,"renewedAt":"2026-01-02T03:04:05.000000006Z","ttl":"1m30s","value":"10.0.0.7:8080 ü"}`
	if string(got) != wantValued {
		t.Fatalf("json.Marshal of a published value =\n%s\nwant\n%s", got, wantValued)
	}
	if err := json.Unmarshal(got, &back); err != nil || back.Value != valued.Value {
		t.Fatalf("round trip of a published value = %+v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(want), &back); err != nil || back.Value != "" {
		t.Fatalf("a record without a value = %+v, %v; want the value empty", back, err)
	}
}

// validHolderJSON is the holder of sampleSnapshot, as stored.
const validHolderJSON = `{"host":"h","bootId":"b","pid":42,"startTime":9,"pidNamespace":7}`

func TestSnapshotUnmarshalRejects(t *testing.T) {
	h := validHolderJSON
	for _, tt := range []struct{ doc, field string }{
		{`{"generation":1,"holder":` + h + `}`, "ttl"},
		{`{"generation":1,"holder":` + h + `,"ttl":""}`, "ttl"},
		{`{"generation":1,"holder":` + h + `,"ttl":"soon"}`, "ttl"},
		{`{"generation":1,"holder":` + h + `,"ttl":"-5s"}`, "ttl"},
		{`{"generation":1,"holder":` + h + `,"ttl":"0s"}`, "ttl"},
		{`{"generation":0,"holder":` + h + `,"ttl":"1s"}`, "generation"},
		{`{"holder":` + h + `,"ttl":"1s"}`, "generation"},
		{`{"generation":1,"ttl":"1s"}`, "holder"},
		{`{"generation":1,"ttl":"1s","holder":{}}`, "holder"},
		{`{"generation":1,"ttl":"1s","holder":null}`, "holder"},
		{`{"generation":1,"ttl":"1s","holder":{"pid":-7}}`, "holder"},
		{`{"generation":1,"ttl":"1s","holder":{"host":"h","bootId":"b","pid":-7,"startTime":9}}`, "holder"},
		{`{"generation":1,"ttl":"1s","holder":{"host":"h","bootId":"b","pid":42,"startTime":0}}`, "holder"},
		{`{"generation":1,"ttl":"1s","holder":"me"}`, "holder"},
		{`{"generation":1,"holder":` + h + `,"ttl":"1s","broken":true}`, "broken"},
		{`{"generation":1,"holder":` + h + `,"ttl":"1s","value":"a\u0000b"}`, "value"},
		{`{"generation":1,"holder":` + h + `,"ttl":"1s","value":"` + strings.Repeat("v", store.MaxValueLen+1) + `"}`, "value"},
		{`{"generation":1,"holder":` + h + `,"ttl":"1s","value":7}`, ""},
		{`{"generation":-1,"holder":` + h + `,"ttl":"1s"}`, ""},
		{`{"generation":1,"holder":` + h + `,"ttl":"1s","renewedAt":"yesterday"}`, ""},
		{`[]`, ""},
	} {
		var s store.Snapshot
		err := json.Unmarshal([]byte(tt.doc), &s)
		if err == nil {
			t.Errorf("Unmarshal(%s) = %+v, want an error", tt.doc, s)
			continue
		}
		if tt.field == "" {
			continue
		}
		var fe *store.SnapshotFieldError
		if !errors.As(err, &fe) || fe.Field != tt.field || !strings.HasPrefix(err.Error(), tt.field+": ") {
			t.Errorf("Unmarshal(%s) = %v, want a *SnapshotFieldError naming %s", tt.doc, err, tt.field)
		}
	}
	var s store.Snapshot
	if err := json.Unmarshal([]byte(`{"generation":2,"holder":`+h+`,"ttl":"1s","futureField":true}`), &s); err != nil || s.Generation != 2 {
		t.Errorf("a snapshot with an unknown field = %+v, %v; want it read", s, err)
	}
	if err := json.Unmarshal([]byte(`{"generation":2,"holder":`+h+`,"ttl":"1s"}`+strings.Repeat(" ", 3)), &s); err != nil {
		t.Errorf("trailing space: %v", err)
	}
	tomb := `{"generation":2,"holder":` + h + `,"released":true,"ttl":"1s"}`
	if err := json.Unmarshal([]byte(tomb), &s); err != nil || !s.Released || s.Holder.PID != 42 {
		t.Errorf("a tombstone = %+v, %v; want it read", s, err)
	}
}

// TestSnapshotValidate: Validate names the first field that no record
// holds, and accepts the records a manager writes, tombstones included.
func TestSnapshotValidate(t *testing.T) {
	good := sampleSnapshot()
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate(%+v) = %v", good, err)
	}
	good.Released = false
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate(%+v) = %v", good, err)
	}
	good.Value = strings.Repeat("v", store.MaxValueLen)
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate(longest value) = %v", err)
	}
	good.Generation = ^store.Token(0)
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate(largest generation) = %v", err)
	}
	for _, tt := range []struct {
		name, field, reason string
		change              func(*store.Snapshot)
	}{
		{"generation 0", "generation", "0 is not a generation", func(s *store.Snapshot) { s.Generation = 0 }},
		{"no holder", "holder", `"bootId": missing`, func(s *store.Snapshot) { s.Holder = platform.Identity{} }},
		{"negative pid", "holder", `"pid": -7 is not a process id`, func(s *store.Snapshot) { s.Holder.PID = -7 }},
		{"no start time", "holder", `"startTime": missing`, func(s *store.Snapshot) { s.Holder.StartTime = 0 }},
		{"ttl 0", "ttl", "0s is not positive", func(s *store.Snapshot) { s.TTL = 0 }},
		{"negative ttl", "ttl", "-5s is not positive", func(s *store.Snapshot) { s.TTL = -5 * time.Second }},
		{"long value", "value", "1025 bytes, more than 1024", func(s *store.Snapshot) { s.Value = strings.Repeat("v", store.MaxValueLen+1) }},
		{"NUL in value", "value", "contains NUL", func(s *store.Snapshot) { s.Value = "a\x00" }},
		{"value not UTF-8", "value", "not valid UTF-8", func(s *store.Snapshot) { s.Value = "\xc3" }},
	} {
		s := sampleSnapshot()
		tt.change(&s)
		err := s.Validate()
		var fe *store.SnapshotFieldError
		if !errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(err.Error(), tt.reason) {
			t.Errorf("%s: Validate = %v, want a *SnapshotFieldError for %s saying %q", tt.name, err, tt.field, tt.reason)
		}
	}
}
