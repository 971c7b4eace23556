package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rivus/collab/lease/store"
)

// SchemaError reports lease tables whose schema version this package does
// not know, most likely written by a newer version. The tables are left
// untouched.
type SchemaError struct {
	Where     string // the database and table
	Version   int64  // the version found
	Supported int64  // the version this package reads and writes
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("lease: %s has schema version %d; this version of collab supports %d", e.Where, e.Version, e.Supported)
}

// schemaVersion is the schema this package reads and writes.
const schemaVersion = 2

// Version 1 had no broken column; setupSchema adds it.
const versionWithoutBroken = 1

// setupLock is the advisory lock that serialises schema set-ups: two
// sessions running CREATE TABLE IF NOT EXISTS at once can both pass the
// check and one of them then fails on the catalog's unique index.
const setupLock = 0x636f6c6c61620001 // "collab", 1

// setupSchema creates the tables if missing and checks the version, in
// one transaction under setupLock.
func setupSchema(ctx context.Context, pool *pgxpool.Pool, schema string, table, version pgx.Identifier, where string) error {
	failed := func(err error) error {
		return fail(ctx, "open", "", fmt.Errorf("%s: %w", where, err))
	}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(setupLock)); err != nil {
			return err
		}
		if schema != "" {
			if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
				return err
			}
		}
		v := version.Sanitize()
		for _, q := range []string{
			"CREATE TABLE IF NOT EXISTS " + v + " (id integer PRIMARY KEY CHECK (id = 1), version integer NOT NULL)",
			"INSERT INTO " + v + " (id, version) VALUES (1, 2) ON CONFLICT (id) DO NOTHING",
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		var found int64
		if err := tx.QueryRow(ctx, "SELECT version FROM "+v+" WHERE id = 1").Scan(&found); err != nil {
			return err
		}
		if found != schemaVersion && found != versionWithoutBroken {
			return &SchemaError{Where: where, Version: found, Supported: schemaVersion}
		}
		_, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+table.Sanitize()+` (
	key        text    PRIMARY KEY,
	revision   bigint  NOT NULL CHECK (revision > 0),
	generation bigint  NOT NULL,
	holder     text    NOT NULL,
	released   boolean NOT NULL,
	renewed_at text    NOT NULL,
	ttl_ns     bigint  NOT NULL,
	broken     boolean NOT NULL DEFAULT false
)`)
		if err != nil || found == schemaVersion {
			return err
		}
		// From version 1: every row there is unbroken.
		if _, err := tx.Exec(ctx, "ALTER TABLE "+table.Sanitize()+" ADD COLUMN IF NOT EXISTS broken boolean NOT NULL DEFAULT false"); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE "+v+" SET version = 2 WHERE id = 1")
		return err
	})
	var se *SchemaError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return &store.RepositoryError{Op: "open", Err: se}
	default:
		return failed(err)
	}
}

// checkSchema checks that the repository's tables exist at the version
// this package writes, reading only, for a read-only Open.
func checkSchema(ctx context.Context, pool *pgxpool.Pool, _ string, table, version pgx.Identifier, where string) error {
	var found int64
	if err := pool.QueryRow(ctx, "SELECT version FROM "+version.Sanitize()+" WHERE id = 1").Scan(&found); err != nil {
		return fail(ctx, "open", "", fmt.Errorf("%s: no lease repository to read: %w", where, err))
	}
	if found != schemaVersion {
		return &store.RepositoryError{Op: "open", Err: &SchemaError{Where: where, Version: found, Supported: schemaVersion}}
	}
	if _, err := pool.Exec(ctx, "SELECT 1 FROM "+table.Sanitize()+" LIMIT 0"); err != nil {
		return fail(ctx, "open", "", fmt.Errorf("%s: %w", where, err))
	}
	return nil
}
