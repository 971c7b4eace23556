package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/platform"
)

// When the session holding a fence ends, the server drops the lock, and
// the fenced work under it is cancelled with cause ErrFenceLost.
func TestFenceLossCancelsFencedWork(t *testing.T) {
	repo := openRepo(t, newSchema(t))
	m, err := lease.NewManager(lease.Config{TTL: 20 * time.Second, Heartbeat: 5 * time.Second, Repository: repo, Platform: platform.OS()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l, err := m.Acquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	result := make(chan error, 1)
	go func() {
		result <- l.RunFenced(t.Context(), func(ctx context.Context, _ lease.Token) error {
			close(started)
			<-ctx.Done()
			return context.Cause(ctx)
		})
	}()
	<-started
	conn := rawConn(t, testURL(t))
	defer conn.Close(context.Background())
	var ended int
	err = conn.QueryRow(t.Context(), "SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid() AND database = (SELECT oid FROM pg_database WHERE datname = current_database())").Scan(&ended)
	if err != nil || ended != 1 {
		t.Fatalf("ending the session holding the fence: %d sessions, %v", ended, err)
	}
	select {
	case err := <-result:
		if !errors.Is(err, lease.ErrFenceLost) {
			t.Fatalf("RunFenced = %v, want ErrFenceLost", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the fenced work was not cancelled after its fence was lost")
	}
	if err := l.Err(); err != nil {
		t.Fatalf("the lease itself is still held, Err() = %v", err)
	}
}
