package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rivus/collab/platform"
)

// Snapshot is the state of one lease as the repository stores it.
//
// Its JSON form is stable, with lowerCamel field names, and TTL written
// as a Go duration string:
//
//	{"generation":3,"holder":{...},"released":false,
//	 "renewedAt":"2026-01-01T00:00:00Z","ttl":"1m0s","value":"10.0.0.7:8080"}
//
// with "value" left out when empty.
type Snapshot struct {
	// Generation is the fencing token of the holder that wrote the
	// record. It changes only on acquisition.
	Generation Token
	// Holder is the process holding (or, in a tombstone, last holding)
	// the lease.
	Holder platform.Identity
	// Released marks a tombstone: the holder released the lease, and the
	// record stays so that the next generation is still larger.
	Released bool
	// Broken marks a tombstone written over a holder by an operator
	// (lease.Break) rather than by the holder: Holder is the process that
	// broke the lease, and Generation one above the broken holder's, so
	// that its renewal conflicts and its fenced work is refused. Broken
	// implies Released.
	Broken bool
	// RenewedAt is the holder's wall clock at the write, for people. No
	// decision uses it: observers measure the TTL on their own monotonic
	// clock.
	RenewedAt time.Time
	// TTL is how long after a renewal observers wait before they may take
	// over a holder that stopped renewing.
	TTL time.Duration
	// Value is what the holder publishes with its lease for observers (an
	// address, a version): at most MaxValueLen bytes of valid UTF-8
	// without NUL, "" for none. It is written with every renewal, so it
	// stays small. A tombstone carries the value of none: the lease
	// package writes "" when it releases or breaks.
	Value string
}

// MaxValueLen is the longest Snapshot.Value, in bytes.
const MaxValueLen = 1024

// snapshotJSON is the stored form of a Snapshot.
type snapshotJSON struct {
	Generation Token             `json:"generation"`
	Holder     platform.Identity `json:"holder"`
	Released   bool              `json:"released"`
	Broken     bool              `json:"broken,omitempty"`
	RenewedAt  time.Time         `json:"renewedAt"`
	TTL        string            `json:"ttl"`
	Value      string            `json:"value,omitempty"`
}

// snapshotJSONIn is snapshotJSON as read: the holder stays raw until
// platform.ParseIdentity checks it.
type snapshotJSONIn struct {
	Generation Token           `json:"generation"`
	Holder     json.RawMessage `json:"holder"`
	Released   bool            `json:"released"`
	Broken     bool            `json:"broken"`
	RenewedAt  time.Time       `json:"renewedAt"`
	TTL        string          `json:"ttl"`
	Value      string          `json:"value"`
}

// MarshalJSON writes the stable JSON form of s.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	return json.Marshal(snapshotJSON{
		Generation: s.Generation,
		Holder:     s.Holder,
		Released:   s.Released,
		Broken:     s.Broken,
		RenewedAt:  s.RenewedAt,
		TTL:        s.TTL.String(),
		Value:      s.Value,
	})
}

// UnmarshalJSON reads the JSON form of a snapshot, and checks it as
// Validate does: a snapshot that no lease record can hold is an error
// naming the field. Unknown fields are ignored so that newer writers
// stay readable. A JSON null changes nothing, as encoding/json expects.
func (s *Snapshot) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var j snapshotJSONIn
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	if len(j.Holder) == 0 {
		return &SnapshotFieldError{Field: "holder", Err: errors.New("missing")}
	}
	holder, err := platform.ParseIdentity(j.Holder)
	if err != nil {
		return &SnapshotFieldError{Field: "holder", Err: err}
	}
	if j.TTL == "" {
		return &SnapshotFieldError{Field: "ttl", Err: errors.New("missing")}
	}
	ttl, err := time.ParseDuration(j.TTL)
	if err != nil {
		return &SnapshotFieldError{Field: "ttl", Err: err}
	}
	v := Snapshot{Generation: j.Generation, Holder: holder, Released: j.Released, Broken: j.Broken, RenewedAt: j.RenewedAt, TTL: ttl, Value: j.Value}
	if err := v.Validate(); err != nil {
		return err
	}
	*s = v
	return nil
}

// Validate reports the first field of s that no lease record holds, as
// a *SnapshotFieldError: generation 0 (acquisitions start at 1), a holder
// that is not a valid process identity (platform.Identity.Validate),
// Broken without Released, a TTL that is not positive, or a RenewedAt
// that RFC 3339 cannot write (a year outside 0 to 9999, a zone offset of
// a day or more), or a Value that ValidateValue refuses. A tombstone (Released) holds the same: the last holder
// (a broken one, its breaker), its generation and its TTL.
// Repositories check every record they read with it, and report a
// failure as a *CorruptRecordError; they check every snapshot they are
// asked to save with it too.
func (s Snapshot) Validate() error {
	if s.Generation == 0 {
		return &SnapshotFieldError{Field: "generation", Err: errors.New("0 is not a generation (acquisitions start at 1)")}
	}
	if err := s.Holder.Validate(); err != nil {
		return &SnapshotFieldError{Field: "holder", Err: err}
	}
	if s.Broken && !s.Released {
		return &SnapshotFieldError{Field: "broken", Err: errors.New("a broken lease is a tombstone, but released is false")}
	}
	if s.TTL <= 0 {
		return &SnapshotFieldError{Field: "ttl", Err: fmt.Errorf("%v is not positive", s.TTL)}
	}
	if y := s.RenewedAt.Year(); y < 0 || y > 9999 {
		return &SnapshotFieldError{Field: "renewedAt", Err: fmt.Errorf("year %d is outside 0 to 9999", y)}
	}
	if _, off := s.RenewedAt.Zone(); off <= -24*3600 || off >= 24*3600 {
		return &SnapshotFieldError{Field: "renewedAt", Err: fmt.Errorf("zone offset %v is a day or more", time.Duration(off)*time.Second)}
	}
	return ValidateValue(s.Value)
}

// ValidateValue reports whether v can be published with a lease
// (Snapshot.Value): at most MaxValueLen bytes of valid UTF-8 without
// NUL, so that every store keeps it as text and `collab lease ls` can
// print it. It returns a *SnapshotFieldError naming the field "value".
func ValidateValue(v string) error {
	if reason := textFault(v, MaxValueLen); reason != "" {
		return &SnapshotFieldError{Field: "value", Err: errors.New(reason)}
	}
	return nil
}
