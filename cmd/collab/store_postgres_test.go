package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestLeasePostgresStore: `--store postgres://...` runs a command under a
// lease kept in PostgreSQL, and `lease ls` lists it. The test needs the
// server named by COLLAB_TEST_POSTGRES_URL (scripts/pg-test-server.sh).
func TestLeasePostgresStore(t *testing.T) {
	url := os.Getenv("COLLAB_TEST_POSTGRES_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("COLLAB_TEST_POSTGRES_URL is not set")
		}
		t.Skip("COLLAB_TEST_POSTGRES_URL is not set; start a server with scripts/pg-test-server.sh /tmp/collab-pg and set it to the URL printed")
	}
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
