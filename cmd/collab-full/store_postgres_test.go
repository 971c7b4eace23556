package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	neturl "net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestLeasePostgresStore: `--store postgres://...` runs a command under a
// lease kept in PostgreSQL, and `lease ls` lists it. The test needs the
// server named by COLLAB_TEST_POSTGRES_URL (scripts/pg-test-server.sh).
func TestLeasePostgresStore(t *testing.T) {
	url := testPostgresURL(t)
	var b [8]byte
	_, _ = rand.Read(b[:])
	key := "cmd-test-" + hex.EncodeToString(b[:])
	t.Cleanup(func() { deleteKey(t, url, key) })
	// Both spellings of the scheme reach the same table: the second run
	// gets the next token.
	for i, store := range []string{url, "postgresql" + strings.TrimPrefix(url, "postgres")} {
		code, out, errOut := runCLI(t, "", "lease", "run", "--store", store, "--key", key, "--", "sh", "-c", "echo $COLLAB_LEASE_TOKEN")
		if code != 0 || strings.TrimSpace(out) != strconv.Itoa(i+1) {
			t.Fatalf("lease run --store %s: exit %d, token %q, want %d; stderr %q", store, code, out, i+1, errOut)
		}
	}
	code, out, errOut := runCLI(t, "", "lease", "ls", "--store", url, "--json")
	if code != 0 {
		t.Fatalf("lease ls: exit %d, stderr %q", code, errOut)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var r leaseRow
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		if r.Key == key {
			if r.State != "released" {
				t.Fatalf("%s is %s, want released", key, r.State)
			}
			return
		}
	}
	t.Fatalf("lease ls does not list %s:\n%s", key, out)
}

// testPostgresURL returns COLLAB_TEST_POSTGRES_URL; without it the test
// is skipped, or fails under CI.
func testPostgresURL(t *testing.T) string {
	url := os.Getenv("COLLAB_TEST_POSTGRES_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("COLLAB_TEST_POSTGRES_URL is not set")
		}
		t.Skip("COLLAB_TEST_POSTGRES_URL is not set; start a server with scripts/pg-test-server.sh DIR and set it to the URL printed")
	}
	return url
}

// TestDemoRunsOnPostgres runs a two-second demo on PostgreSQL: it must be
// linearizable, and drop the schema it made for its tables.
func TestDemoRunsOnPostgres(t *testing.T) {
	url := testPostgresURL(t)
	t.Setenv(asCollabEnv, "1") // for the workers' `collab lock` (TestMain)
	var out, errb strings.Builder
	code := runDemo([]string{"--duration", "2s", "--store", "postgres", "--postgres-url", url, "--seed", "5",
		"--workers", "3", "--dir", t.TempDir(), "--lanes", "1s"}, nil, &out, &errb)
	text := out.String()
	if code != 0 || !strings.Contains(text, "porcupine: linearizable") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, text, errb.String())
	}
	m := regexp.MustCompile(`PostgreSQL schema: (collab_torture_5_\d+) \(dropped\)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("output does not name a dropped schema of seed 5:\n%s", text)
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1", m[1]).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("schema %s is still there", m[1])
	}
}

// deleteKey removes the test's record, which the repository never does.
func deleteKey(t *testing.T, url, key string) {
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "DELETE FROM collab_leases WHERE key = $1", key); err != nil {
		t.Error(err)
	}
}

// TestLeaseLsPostgresSelectOnly: lease ls works for a role that may only
// read the lease tables: it creates, migrates and inserts nothing.
func TestLeaseLsPostgresSelectOnly(t *testing.T) {
	url := testPostgresURL(t)
	var b [8]byte
	_, _ = rand.Read(b[:])
	key, role := "cmd-ro-"+hex.EncodeToString(b[:]), "collab_ro_"+hex.EncodeToString(b[:])
	t.Cleanup(func() { deleteKey(t, url, key) })
	if code, _, errOut := runCLI(t, "", "lease", "run", "--store", url, "--key", key, "--", "true"); code != 0 {
		t.Fatalf("lease run: %s", errOut)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	id := pgx.Identifier{role}.Sanitize()
	for _, q := range []string{"CREATE ROLE " + id + " LOGIN", "GRANT SELECT ON collab_leases, collab_lease_schema TO " + id} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = conn.Exec(ctx, "REVOKE ALL ON collab_leases, collab_lease_schema FROM "+id)
		_, _ = conn.Exec(ctx, "DROP ROLE "+id)
	})
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	u.User = neturl.User(role)
	code, out, errOut := runCLI(t, "", "lease", "ls", "--store", u.String())
	if code != 0 || !lineHas(out, key, "released") {
		t.Fatalf("lease ls as a role that may only read: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
