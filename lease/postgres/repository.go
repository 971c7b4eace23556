package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// Repository keeps lease records in a PostgreSQL table and its fences in
// advisory locks. It is safe for concurrent use, and by processes on any
// number of hosts. See the package documentation.
type Repository struct {
	pool   *pgxpool.Pool // loads and saves
	fences *fences
	listen *listener // the watches of tombstones (WatchFreed)
	where  string    // the database and table, for messages
	q      queries

	lastHolder atomic.Pointer[string] // the holder that parses accepted last
}

var (
	_ store.Repository = (*Repository)(nil)
	_ store.BatchSaver = (*Repository)(nil)
	_ store.Lister     = (*Repository)(nil)
)

// Option changes how Open sets up the repository.
type Option func(*options)

type options struct {
	schema   string
	clock    platform.Clock
	readOnly bool
}

// ReadOnly opens an existing repository for reading: Open creates,
// migrates and inserts nothing, so that a role that may only SELECT can
// list the leases (collab lease ls). It reads tables of schema version 2,
// which a writer has not yet brought to version 3, as records without a
// value. A database without the repository's tables, or with another
// version of them, is a *store.RepositoryError.
func ReadOnly() Option {
	return func(o *options) { o.readOnly = true }
}

// WithSchema keeps the tables in the PostgreSQL schema name, created if
// missing, instead of the connection's current schema (normally public).
func WithSchema(name string) Option {
	return func(o *options) { o.schema = name }
}

// WithClock makes fence waiters back off, and fence watches poll, on
// clock instead of the real clock; nil means the real clock.
func WithClock(clock platform.Clock) Option {
	return func(o *options) {
		if clock != nil {
			o.clock = clock
		}
	}
}

// Open connects to the database at url (postgres://... or a key=value
// connection string), and creates or checks the schema. Failures are
// *store.RepositoryError; an unknown schema version wraps a
// *SchemaError and leaves the database untouched.
func Open(ctx context.Context, url string, opts ...Option) (*Repository, error) {
	o := options{clock: platform.RealClock()}
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The message may quote the URL, password included: keep it out.
		return nil, &store.RepositoryError{Op: "open", Err: errors.New("cannot parse the PostgreSQL connection string")}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, &store.RepositoryError{Op: "open", Err: err}
	}
	r, err := setup(ctx, pool, cfg, o)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return r, nil
}

// setup creates the schema and the fence pool of a new repository.
func setup(ctx context.Context, pool *pgxpool.Pool, cfg *pgxpool.Config, o options) (*Repository, error) {
	table := pgx.Identifier{"collab_leases"}
	version := pgx.Identifier{"collab_lease_schema"}
	if o.schema != "" {
		table = pgx.Identifier{o.schema, "collab_leases"}
		version = pgx.Identifier{o.schema, "collab_lease_schema"}
	}
	where := fmt.Sprintf("database %s on %s, table %s", cfg.ConnConfig.Database, cfg.ConnConfig.Host, table.Sanitize())
	check := setupSchema
	if o.readOnly {
		check = checkSchema
	}
	found, err := check(ctx, pool, o.schema, table, version, where)
	if err != nil {
		return nil, err
	}
	fencePool, err := pgxpool.NewWithConfig(ctx, cfg.Copy())
	if err != nil {
		return nil, &store.RepositoryError{Op: "open", Err: err}
	}
	return &Repository{
		pool:   pool,
		fences: &fences{pool: fencePool, clock: o.clock, space: table.Sanitize()},
		listen: &listener{channel: channelOf(table.Sanitize()), config: cfg.ConnConfig, linger: listenLinger},
		where:  where,
		q:      newQueries(table.Sanitize(), found),
	}, nil
}

// Close closes both pools, waiting for connections in use to come back:
// unlock every fence and end every call first.
func (r *Repository) Close() error {
	r.listen.close()
	r.pool.Close()
	r.fences.pool.Close()
	return nil
}

// fail returns the cause of ctx if it ended (pgx reports an interrupted
// query as its own error), else a *store.RepositoryError.
func fail(ctx context.Context, op, key string, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return &store.RepositoryError{Op: op, Key: key, Err: err}
}
