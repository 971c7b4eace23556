package main

import (
	"context"
	"strings"
	"time"

	"github.com/rivus/collab/lease/postgres"
)

// postgresOpenTimeout bounds connecting to the server and setting up the
// schema, so that an unreachable server fails the command instead of
// hanging it.
const postgresOpenTimeout = 30 * time.Second

// isPostgresURL reports whether spec names a PostgreSQL database rather
// than a file.
func isPostgresURL(spec string) bool {
	return strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://")
}

// openPostgresStore opens the lease tables of the database at url, for
// reading only with readOnly.
func openPostgresStore(url string, readOnly bool) (leaseStore, error) {
	ctx, cancel := context.WithTimeout(context.Background(), postgresOpenTimeout)
	defer cancel()
	var opts []postgres.Option
	if readOnly {
		opts = append(opts, postgres.ReadOnly())
	}
	r, err := postgres.Open(ctx, url, opts...)
	if err != nil {
		return leaseStore{}, err
	}
	return leaseStore{r, r.Close}, nil
}
