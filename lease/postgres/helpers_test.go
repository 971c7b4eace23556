package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/postgres"
	"github.com/rivus/collab/lease/store"
	"go.uber.org/goleak"
)

// urlEnv names the database the tests use; the tests skip without it,
// except in CI.
const urlEnv = "COLLAB_TEST_POSTGRES_URL"

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testURL returns the test database's URL, skipping the test when there
// is none (failing it in CI, where a missing server is a broken set-up).
func testURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv(urlEnv)
	if url != "" {
		return url
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(urlEnv + " is not set")
	}
	t.Skip(urlEnv + " is not set; to run these tests, start a server with\n" +
		"\tscripts/pg-test-server.sh DIR\n" +
		"and set " + urlEnv + " to the URL it prints")
	return ""
}

// newSchema returns the name of a fresh PostgreSQL schema, dropped with
// everything in it when the test ends, so that tests never share records
// or fences.
func newSchema(t testing.TB) string {
	t.Helper()
	url := testURL(t)
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "collab_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		execSQL(t, url, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE")
	})
	return name
}

// openRepo opens a repository on schema, closed when the test ends.
func openRepo(t testing.TB, schema string, opts ...postgres.Option) *postgres.Repository {
	t.Helper()
	r, err := postgres.Open(context.Background(), testURL(t), append([]postgres.Option{postgres.WithSchema(schema)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// execSQL runs query on a connection of its own.
func execSQL(t testing.TB, url, query string, args ...any) {
	t.Helper()
	conn := rawConn(t, url)
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// snap returns a valid snapshot of generation gen, which Load accepts.
func snap(gen lease.Token) store.Snapshot {
	return store.Snapshot{Generation: gen, Holder: benchHolder, RenewedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), TTL: time.Minute}
}

// rawConn opens a connection that bypasses the repository.
func rawConn(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}
