package main

import (
	"context"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
)

// keptSchema matches the schema a PostgreSQL campaign keeps as evidence
// of a violation.
var keptSchema = regexp.MustCompile(`PostgreSQL schema: (collab_torture_[0-9_]+) \(kept\)`)

// dropKeptSchema drops the schema that a campaign run on PostgreSQL kept,
// if it kept one: the report holds what the run found, and the user's
// database should not fill with the evidence of planted bugs.
func dropKeptSchema(ctx context.Context, url, stdout string) error {
	m := keptSchema.FindStringSubmatch(stdout)
	if m == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{m[1]}.Sanitize()+" CASCADE")
	return err
}
