package lease

import (
	"context"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rivus/collab/lease/store"
)

var (
	_ store.Lister = (*MemoryRepository)(nil)
	_ store.Lister = (*SQLiteRepository)(nil)
	_ store.Lister = (*FileRepository)(nil)
)

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

// Keys returns every key with a row, sorted.
func (r *SQLiteRepository) Keys(ctx context.Context) ([]string, error) {
	rows, err := r.db.QueryContext(ctx, "SELECT key FROM leases ORDER BY key")
	if err != nil {
		return nil, r.fail(ctx, "list", "", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, r.fail(ctx, "list", "", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, r.fail(ctx, "list", "", err)
	}
	return keys, nil
}

// Keys returns the key of every record file, sorted. Names that no key
// encodes to (a person's stray file) are skipped, not fatal.
func (r *FileRepository) Keys(ctx context.Context) ([]string, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	var keys []string
	err := r.walk(r.dir, func(rel string) {
		if k, err := decodeKeyPath(rel, recordSuffix); err == nil {
			keys = append(keys, k)
		}
	})
	if err != nil {
		return nil, &store.RepositoryError{Op: "list", Err: err}
	}
	slices.Sort(keys)
	return keys, nil
}

// walk calls found with the path, relative to root, of every record file
// under root, skipping the lock directories.
func (r *FileRepository) walk(root string, found func(rel string)) error {
	var visit func(dir string) error
	visit = func(dir string) error {
		entries, err := r.fs.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := filepath.Join(dir, e.Name())
			switch {
			case strings.HasPrefix(e.Name(), "."):
			case e.IsDir():
				if err := visit(name); err != nil {
					return err
				}
			case e.Type()&fs.ModeType == 0 && strings.HasSuffix(e.Name(), recordSuffix):
				rel, err := filepath.Rel(root, name)
				if err != nil {
					return err
				}
				found(rel)
			}
		}
		return nil
	}
	return visit(root)
}
