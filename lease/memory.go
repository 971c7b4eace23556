package lease

import (
	"context"
	"slices"
	"sync"

	"github.com/rivus/collab/internal/keylock"
	"github.com/rivus/collab/lease/internal/check"
	"github.com/rivus/collab/lease/store"
)

// MemoryRepository keeps records in the memory of one process: for tests,
// and for leases among the goroutines of one process. Its fence excludes
// goroutines only. The zero value is not usable; call NewMemoryRepository.
type MemoryRepository struct {
	mu      sync.Mutex
	records map[string]store.Record
	freed   map[string]map[chan struct{}]struct{} // the watches of each key
	fences  keylock.Locks
}

var (
	_ store.Repository = (*MemoryRepository)(nil)
	_ store.BatchSaver = (*MemoryRepository)(nil)
	_ store.Lister     = (*MemoryRepository)(nil)
	_ store.Watcher    = (*MemoryRepository)(nil)
)

// NewMemoryRepository returns an empty repository.
func NewMemoryRepository() *MemoryRepository {
	return &MemoryRepository{records: make(map[string]store.Record)}
}

// Load returns the record of key, if any.
func (m *MemoryRepository) Load(ctx context.Context, key string) (store.Record, bool, error) {
	if err := check.Call(ctx, key); err != nil {
		return store.Record{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.records[key]
	return rec, ok, nil
}

// Save writes s over expected.
func (m *MemoryRepository) Save(ctx context.Context, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	if err := check.Save(ctx, key, s); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.saveLocked(key, s, expected)
}

// SaveBatch applies writes in order under one lock, so that no other
// caller sees part of the batch.
func (m *MemoryRepository) SaveBatch(ctx context.Context, writes []store.Write) ([]store.Revision, []error) {
	revs, errs := make([]store.Revision, len(writes)), make([]error, len(writes))
	if ctx.Err() != nil {
		check.Fill(errs, context.Cause(ctx))
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

func (m *MemoryRepository) saveLocked(key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	cur := m.records[key].Revision
	if cur != expected {
		return 0, &store.RevisionConflictError{Key: key, Expected: expected, Actual: cur}
	}
	next := cur + 1
	// The wall clock reading only, so that a record compares like one
	// read back from storage.
	s.RenewedAt = s.RenewedAt.Round(0)
	m.records[key] = store.Record{Snapshot: s, Revision: next}
	if s.Released {
		for c := range m.freed[key] {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
	return next, nil
}

// WatchFreed wakes freed after each tombstone of key saved in this
// repository.
func (m *MemoryRepository) WatchFreed(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if err := check.Call(ctx, key); err != nil {
		return nil, nil, err
	}
	c := make(chan struct{}, 1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed == nil {
		m.freed = map[string]map[chan struct{}]struct{}{}
	}
	if m.freed[key] == nil {
		m.freed[key] = map[chan struct{}]struct{}{}
	}
	m.freed[key][c] = struct{}{}
	var once sync.Once
	return c, func() {
		once.Do(func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			delete(m.freed[key], c)
			if len(m.freed[key]) == 0 {
				delete(m.freed, key)
			}
		})
	}, nil
}

// Fence holds key's fence against the other goroutines of this
// repository until unlock.
func (m *MemoryRepository) Fence(ctx context.Context, key string) (func(), error) {
	if err := check.Call(ctx, key); err != nil {
		return nil, err
	}
	return m.fences.Lock(ctx, key)
}

// Keys returns every key with a record, sorted.
func (m *MemoryRepository) Keys(ctx context.Context) ([]string, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]string, 0, len(m.records))
	for k := range m.records {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, nil
}
