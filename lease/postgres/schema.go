package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
const schemaVersion = 3

// firstColumns are the columns of the leases table at version 1.
const firstColumns = `
	key        text    PRIMARY KEY,
	revision   bigint  NOT NULL CHECK (revision > 0),
	generation bigint  NOT NULL,
	holder     text    NOT NULL,
	released   boolean NOT NULL,
	renewed_at text    NOT NULL,
	ttl_ns     bigint  NOT NULL`

// addedColumns are the columns that each later version added, in order:
// addedColumns[i] brought the tables from version i+1 to i+2. A new table
// has them all; setupSchema adds those that an older table lacks, with
// the default that its rows mean.
var addedColumns = [schemaVersion - 1]string{
	"broken boolean NOT NULL DEFAULT false", // 2: every row of version 1 is unbroken
	"value  text    NOT NULL DEFAULT ''",    // 3: no row of version 2 has a value
}

// setupLock is the advisory lock that serialises schema set-ups: two
// sessions running CREATE TABLE IF NOT EXISTS at once can both pass the
// check and one of them then fails on the catalog's unique index.
const setupLock = 0x636f6c6c61620001 // "collab", 1

// setupSchema creates the tables if missing, or brings those of an older
// version to schemaVersion, in one transaction under setupLock. It
// returns the version it leaves them at.
func setupSchema(ctx context.Context, pool *pgxpool.Pool, schema string, table, version pgx.Identifier, where string) (int64, error) {
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
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+v+" (id integer PRIMARY KEY CHECK (id = 1), version integer NOT NULL)"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+v+" (id, version) VALUES (1, $1) ON CONFLICT (id) DO NOTHING", int64(schemaVersion)); err != nil {
			return err
		}
		var found int64
		if err := tx.QueryRow(ctx, "SELECT version FROM "+v+" WHERE id = 1").Scan(&found); err != nil {
			return err
		}
		if found < 1 || found > schemaVersion {
			return &SchemaError{Where: where, Version: found, Supported: schemaVersion}
		}
		t := table.Sanitize()
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+t+" ("+firstColumns+",\n\t"+strings.Join(addedColumns[:], ",\n\t")+"\n)"); err != nil {
			return err
		}
		if found == schemaVersion {
			return nil
		}
		// The columns of the versions after found; IF NOT EXISTS, so that
		// a step that some earlier set-up began is finished whole.
		for _, column := range addedColumns[found-1:] {
			if _, err := tx.Exec(ctx, "ALTER TABLE "+t+" ADD COLUMN IF NOT EXISTS "+column); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, "UPDATE "+v+" SET version = $1 WHERE id = 1", int64(schemaVersion))
		return err
	})
	var se *SchemaError
	switch {
	case err == nil:
		return schemaVersion, nil
	case errors.As(err, &se):
		return 0, &store.RepositoryError{Op: "open", Err: se}
	default:
		return 0, fail(ctx, "open", "", fmt.Errorf("%s: %w", where, err))
	}
}

// versionWithoutValue is the oldest version that a read-only Open reads:
// it has no value column, and its records read with none.
const versionWithoutValue = 2

// checkSchema checks that the repository's tables exist, at a version
// that a read-only Open reads (versionWithoutValue or schemaVersion),
// reading only, and returns that version.
func checkSchema(ctx context.Context, pool *pgxpool.Pool, _ string, table, version pgx.Identifier, where string) (int64, error) {
	var found int64
	if err := pool.QueryRow(ctx, "SELECT version FROM "+version.Sanitize()+" WHERE id = 1").Scan(&found); err != nil {
		return 0, fail(ctx, "open", "", fmt.Errorf("%s: no lease repository to read: %w", where, err))
	}
	if found != schemaVersion && found != versionWithoutValue {
		return 0, &store.RepositoryError{Op: "open", Err: &SchemaError{Where: where, Version: found, Supported: schemaVersion}}
	}
	// The columns that loads read, so that a table without them fails
	// here rather than in every load.
	if _, err := pool.Exec(ctx, "SELECT "+loadColumns(found)+" FROM "+table.Sanitize()+" LIMIT 0"); err != nil {
		return 0, fail(ctx, "open", "", fmt.Errorf("%s: %w", where, err))
	}
	return found, nil
}
