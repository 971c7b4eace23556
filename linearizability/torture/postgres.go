package torture

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rivus/collab/lease/postgres"
)

// resourceTable is the resource's table in the run's PostgreSQL schema.
const resourceTable = "torture_resource"

// openRetry bounds how long a worker tries to open the PostgreSQL store:
// it may start while the server is stopped or paused.
const openRetry = 30 * time.Second

// preparePostgres names the run's schema if cfg does not, and creates
// the lease tables and the resource table in it before the workers
// start (so that they do not race on CREATE TABLE).
func preparePostgres(ctx context.Context, cfg Config) (Config, error) {
	if cfg.PostgresSchema == "" {
		cfg.PostgresSchema = fmt.Sprintf("collab_torture_%d_%d", cfg.Seed, time.Now().UnixNano())
	}
	repo, err := postgres.Open(ctx, cfg.PostgresURL, postgres.WithSchema(cfg.PostgresSchema))
	if err != nil {
		return cfg, err
	}
	_ = repo.Close()
	conn, err := pgx.Connect(ctx, cfg.PostgresURL)
	if err != nil {
		return cfg, fmt.Errorf("torture: resource table: %w", err)
	}
	defer conn.Close(context.Background())
	q := `CREATE TABLE IF NOT EXISTS ` + pgx.Identifier{cfg.PostgresSchema, resourceTable}.Sanitize() +
		` (key text PRIMARY KEY, value text NOT NULL)`
	if _, err := conn.Exec(ctx, q); err != nil {
		return cfg, fmt.Errorf("torture: resource table: %w", err)
	}
	return cfg, nil
}

// dropSchema drops the run's schema and every table in it.
func dropSchema(ctx context.Context, url, schema string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err == nil {
		_, err = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		err = errors.Join(err, conn.Close(ctx))
	}
	if err != nil {
		return fmt.Errorf("torture: dropping the run's schema %s: %w", schema, err)
	}
	return nil
}

// openPostgres opens a worker's lease repository and resource, trying
// again while the server is down.
func openPostgres(a assignment) (*postgres.Repository, *pgResource, error) {
	var repo *postgres.Repository
	err := retrying(func(ctx context.Context) (err error) {
		repo, err = postgres.Open(ctx, a.PostgresURL, postgres.WithSchema(a.Schema))
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	pool, err := pgxpool.New(context.Background(), a.PostgresURL) // connects lazily
	if err != nil {
		return nil, nil, errors.Join(err, repo.Close())
	}
	return repo, &pgResource{pool: pool, table: pgx.Identifier{a.Schema, resourceTable}.Sanitize()}, nil
}

// pgResource is a table in the run's schema, written through a pool of
// its own: the fence's session is not the writer's.
type pgResource struct {
	pool  *pgxpool.Pool
	table string
}

func (r *pgResource) Write(ctx context.Context, key, value string) error {
	_, err := r.pool.Exec(ctx, `INSERT INTO `+r.table+` (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

func (r *pgResource) Read(ctx context.Context, key string) (string, error) {
	var v string
	err := r.pool.QueryRow(ctx, `SELECT value FROM `+r.table+` WHERE key = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func (r *pgResource) Close() error {
	r.pool.Close()
	return nil
}
