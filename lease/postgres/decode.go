package postgres

import (
	"fmt"
	"time"

	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// storedRow is a row of the leases table as scanned, before it is checked.
type storedRow struct {
	revision, generation, ttl int64
	holder, renewedAt, value  string
	released, broken          bool
}

// decode converts the row to a record, reporting any value that a valid
// record cannot hold (store.Snapshot.Validate included).
func (row storedRow) decode() (store.Record, error) {
	if row.revision <= 0 {
		return store.Record{}, fmt.Errorf("revision %d is not positive", row.revision)
	}
	holder, err := platform.ParseIdentity([]byte(row.holder))
	if err != nil {
		return store.Record{}, &store.SnapshotFieldError{Field: "holder", Err: err}
	}
	t, err := time.Parse(time.RFC3339Nano, row.renewedAt)
	if err != nil {
		return store.Record{}, fmt.Errorf("renewed_at: %w", err)
	}
	s := store.Snapshot{
		Generation: store.Token(row.generation),
		Holder:     holder,
		Released:   row.released,
		// A writer of schema version 1 that opened the tables before their
		// migration sets released without broken: a row it acquired over a
		// broken tombstone keeps broken. Broken means nothing in a held row.
		Broken:    row.broken && row.released,
		RenewedAt: t,
		TTL:       time.Duration(row.ttl),
		// Validate refuses a value over store.MaxValueLen bytes, or not
		// UTF-8 (a database of encoding SQL_ASCII may hold one).
		Value: row.value,
	}
	if err := s.Validate(); err != nil {
		return store.Record{}, err
	}
	return store.Record{Snapshot: s, Revision: store.Revision(row.revision)}, nil
}
