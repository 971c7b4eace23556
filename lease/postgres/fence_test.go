package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestFenceAcrossHandles: a fence held through one repository excludes
// another on the same table (another process, to the server), and a
// fence whose connection dies is dropped by the server.
func TestFenceAcrossHandles(t *testing.T) {
	schema := newSchema(t)
	a, b := openRepo(t, schema), openRepo(t, schema)
	unlock, err := a.Fence(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	wantFenceHeld(t, b, "k")
	unlock()
	unlockB, err := b.Fence(t.Context(), "k")
	if err != nil {
		t.Fatalf("Fence after the other handle's unlock: %v", err)
	}
	wantFenceHeld(t, a, "k")

	// The session holding b's fence ends, as when its host dies.
	conn := rawConn(t, testURL(t))
	defer conn.Close(context.Background())
	var ended int
	err = conn.QueryRow(t.Context(), "SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid() AND database = (SELECT oid FROM pg_database WHERE datname = current_database())").Scan(&ended)
	if err != nil || ended != 1 {
		t.Fatalf("ending the session holding the fence: %d sessions, %v", ended, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	unlockA, err := a.Fence(ctx, "k")
	if err != nil {
		t.Fatalf("Fence after the holder's session ended: %v", err)
	}
	unlockA()
	unlockB() // its connection is gone: the unlock must not hang or panic
	unlockB()
}

// wantFenceHeld checks that a Fence of key through r keeps waiting.
func wantFenceHeld(t *testing.T, r interface {
	Fence(context.Context, string) (func(), error)
}, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	unlock, err := r.Fence(ctx, key)
	if err == nil {
		unlock()
		t.Fatalf("Fence(%q) returned while another handle held it", key)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Fence(%q) = %v, want it to wait until its deadline", key, err)
	}
}
