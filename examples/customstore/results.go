package customstore

import (
	"context"
	"database/sql"
	"errors"
)

// Results is the application's table that leases protect: a worker
// holding a task's lease writes the task's result here, under the fence.
// The campaign uses it as its resource (torture.Resource).
type Results struct{ db *sql.DB }

// Results returns the results table of the repository's database.
func (r *Repository) Results(ctx context.Context) (*Results, error) {
	_, err := r.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS app_results (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT`)
	if err != nil {
		return nil, err
	}
	return &Results{db: r.db}, nil
}

// Write sets key's result.
func (t *Results) Write(ctx context.Context, key, value string) error {
	_, err := t.db.ExecContext(ctx, `INSERT INTO app_results (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

// Read returns key's result, "" if none.
func (t *Results) Read(ctx context.Context, key string) (string, error) {
	var v string
	err := t.db.QueryRowContext(ctx, `SELECT value FROM app_results WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// Close does nothing: the table shares the repository's database, which
// the repository closes.
func (*Results) Close() error { return nil }
