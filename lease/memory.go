package lease

import (
	"context"
	"sync"
)

// MemoryRepository keeps records in the memory of one process: for tests,
// and for leases among the goroutines of one process. Its fence excludes
// goroutines only. The zero value is not usable; call NewMemoryRepository.
type MemoryRepository struct {
	mu      sync.Mutex
	records map[string]Record
	fences  keyLocks
}

var (
	_ Repository = (*MemoryRepository)(nil)
	_ BatchSaver = (*MemoryRepository)(nil)
)

// NewMemoryRepository returns an empty repository.
func NewMemoryRepository() *MemoryRepository {
	return &MemoryRepository{records: make(map[string]Record)}
}

// Load returns the record of key, if any.
func (m *MemoryRepository) Load(ctx context.Context, key string) (Record, bool, error) {
	if err := begin(ctx, key); err != nil {
		return Record{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.records[key]
	return rec, ok, nil
}

// Save writes s over expected.
func (m *MemoryRepository) Save(ctx context.Context, key string, s Snapshot, expected Revision) (Revision, error) {
	if err := beginSave(ctx, key, s); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.saveLocked(key, s, expected)
}

// SaveBatch applies writes in order under one lock, so that no other
// caller sees part of the batch.
func (m *MemoryRepository) SaveBatch(ctx context.Context, writes []Write) ([]Revision, []error) {
	revs, errs := make([]Revision, len(writes)), make([]error, len(writes))
	if ctx.Err() != nil {
		fill(errs, context.Cause(ctx))
		return revs, errs
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, w := range writes {
		if errs[i] = w.Validate(); errs[i] == nil {
			revs[i], errs[i] = m.saveLocked(w.Key, w.Snapshot, w.Expected)
		}
	}
	return revs, errs
}

func (m *MemoryRepository) saveLocked(key string, s Snapshot, expected Revision) (Revision, error) {
	cur := m.records[key].Revision
	if cur != expected {
		return 0, &RevisionConflictError{Key: key, Expected: expected, Actual: cur}
	}
	next := cur + 1
	m.records[key] = Record{Snapshot: s.stored(), Revision: next}
	return next, nil
}

// Fence holds key's fence against the other goroutines of this
// repository until unlock.
func (m *MemoryRepository) Fence(ctx context.Context, key string) (func(), error) {
	if err := begin(ctx, key); err != nil {
		return nil, err
	}
	return m.fences.Lock(ctx, key)
}

// fill sets every element of errs to err.
func fill(errs []error, err error) {
	for i := range errs {
		errs[i] = err
	}
}
