package torture

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/rivus/collab/platform"
)

// Resource is the shared store that fenced writes protect. It accepts
// whatever it is given and records it: the protection is the lease's
// fence and re-read, which the campaign checks. Reads and writes of a
// key both happen under the key's fence, so a read never falls between
// a fenced write's re-read and its write. Read returns "" for a key
// never written. Its calls must return once their ctx ends.
type Resource interface {
	Write(ctx context.Context, key, value string) error
	Read(ctx context.Context, key string) (string, error)
	Close() error
}

// sqliteResource is a table in its own database of the run directory.
type sqliteResource struct{ db *sql.DB }

func openSQLiteResource(p *platform.Platform, dir string) (*sqliteResource, error) {
	db, err := p.SQLite.Open(filepath.Join(dir, resourceDB), platform.SQLiteOptions{
		BusyTimeout: 10 * time.Second, JournalMode: "WAL", TxLock: "immediate"})
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	const schema = `CREATE TABLE IF NOT EXISTS resource (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT`
	if _, err := db.Exec(schema); err != nil {
		return nil, errors.Join(fmt.Errorf("resource schema: %w", err), db.Close())
	}
	return &sqliteResource{db: db}, nil
}

func (r *sqliteResource) Write(ctx context.Context, key, value string) error {
	_, err := r.db.ExecContext(ctx, `INSERT INTO resource (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

func (r *sqliteResource) Read(ctx context.Context, key string) (string, error) {
	var v string
	err := r.db.QueryRowContext(ctx, `SELECT value FROM resource WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func (r *sqliteResource) Close() error { return r.db.Close() }

// fileResource is one JSON file a key, replaced by rename so a reader
// sees a whole value, old or new. It is not synced: a machine crash is
// not a fault the campaign makes.
type fileResource struct {
	dir     string
	process int
}

type fileValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func openFileResource(dir string, process int) (*fileResource, error) {
	d := filepath.Join(dir, resourceDir)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, err
	}
	return &fileResource{dir: d, process: process}, nil
}

func (r *fileResource) Write(ctx context.Context, key, value string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := json.Marshal(fileValue{Key: key, Value: value})
	if err != nil {
		return err
	}
	path := filepath.Join(r.dir, key+".json")
	tmp := fmt.Sprintf("%s.tmp-p%d", path, r.process)
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (r *fileResource) Read(ctx context.Context, key string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(r.dir, key+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var v fileValue
	if err := json.Unmarshal(b, &v); err != nil || v.Key != key {
		return "", fmt.Errorf("resource file of %s: %q is not its value (%v)", key, b, err)
	}
	return v.Value, nil
}

func (*fileResource) Close() error { return nil }
