package postgres

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/rivus/collab/lease"
)

// storedRow is a row of the leases table as scanned, before it is checked.
type storedRow struct {
	revision, generation, ttl int64
	holder, renewedAt         string
	released                  bool
}

// decode converts the row to a record, reporting any value that a valid
// record cannot hold.
func (row storedRow) decode() (lease.Record, error) {
	if row.revision <= 0 {
		return lease.Record{}, fmt.Errorf("revision %d is not positive", row.revision)
	}
	s := lease.Snapshot{
		Generation: lease.Token(row.generation),
		Released:   row.released,
		TTL:        time.Duration(row.ttl),
	}
	if err := json.Unmarshal([]byte(row.holder), &s.Holder); err != nil {
		return lease.Record{}, fmt.Errorf("holder: %w", err)
	}
	t, err := time.Parse(time.RFC3339Nano, row.renewedAt)
	if err != nil {
		return lease.Record{}, fmt.Errorf("renewed_at: %w", err)
	}
	s.RenewedAt = t
	return lease.Record{Snapshot: s, Revision: lease.Revision(row.revision)}, nil
}
