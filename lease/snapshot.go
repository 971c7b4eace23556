package lease

import (
	"encoding/json"
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
//	 "renewedAt":"2026-01-01T00:00:00Z","ttl":"1m0s"}
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
	// RenewedAt is the holder's wall clock at the write, for people. No
	// decision uses it: observers measure the TTL on their own monotonic
	// clock.
	RenewedAt time.Time
	// TTL is how long after a renewal observers wait before they may take
	// over a holder that stopped renewing.
	TTL time.Duration
}

// snapshotJSON is the stored form of a Snapshot.
type snapshotJSON struct {
	Generation Token             `json:"generation"`
	Holder     platform.Identity `json:"holder"`
	Released   bool              `json:"released"`
	RenewedAt  time.Time         `json:"renewedAt"`
	TTL        string            `json:"ttl"`
}

// MarshalJSON writes the stable JSON form of s.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	return json.Marshal(snapshotJSON{
		Generation: s.Generation,
		Holder:     s.Holder,
		Released:   s.Released,
		RenewedAt:  s.RenewedAt,
		TTL:        s.TTL.String(),
	})
}

// UnmarshalJSON reads the JSON form of a snapshot. The ttl field is
// required; unknown fields are ignored so that newer writers stay
// readable. A JSON null changes nothing, as encoding/json expects.
func (s *Snapshot) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var j snapshotJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	if j.TTL == "" {
		return fmt.Errorf("lease snapshot: ttl missing")
	}
	ttl, err := time.ParseDuration(j.TTL)
	if err != nil {
		return fmt.Errorf("lease snapshot: ttl: %w", err)
	}
	*s = Snapshot{Generation: j.Generation, Holder: j.Holder, Released: j.Released, RenewedAt: j.RenewedAt, TTL: ttl}
	return nil
}

// stored returns s as a repository keeps it: the wall clock reading only,
// so that an in-memory record compares like one read back from storage.
func (s Snapshot) stored() Snapshot {
	s.RenewedAt = s.RenewedAt.Round(0)
	return s
}
