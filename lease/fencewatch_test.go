package lease_test

import (
	"context"
	"errors"
	"testing"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/platform/platformtest"
)

// watchedRepo is a memory repository whose fence a test can take away.
type watchedRepo struct {
	*lease.MemoryRepository
	lost chan struct{}
}

func (r watchedRepo) FenceWatch(ctx context.Context, key string) (func(), <-chan struct{}, error) {
	unlock, err := r.Fence(ctx, key)
	return unlock, r.lost, err
}

// A repository that loses a held fence cancels the fenced work with cause
// ErrFenceLost; the lease itself stays held.
func TestFenceLossCancelsFencedWork(t *testing.T) {
	f := platformtest.New(t)
	repo := watchedRepo{lease.NewMemoryRepository(), make(chan struct{})}
	m, _ := newManager(t, f.Platform, repo)
	h := mustAcquire(t, m, "k")
	started := make(chan struct{})
	result := make(chan error, 1)
	go func() {
		result <- h.RunFenced(t.Context(), func(ctx context.Context, _ lease.Token) error {
			close(started)
			<-ctx.Done()
			return context.Cause(ctx)
		})
	}()
	<-started
	close(repo.lost)
	if err := <-result; !errors.Is(err, lease.ErrFenceLost) {
		t.Fatalf("RunFenced = %v, want ErrFenceLost", err)
	}
	if err := h.Err(); err != nil {
		t.Fatalf("Err() = %v after the fence was lost; the lease is still held", err)
	}
	ran := false
	if err := h.RunFenced(t.Context(), func(context.Context, lease.Token) error { ran = true; return nil }); err == nil || ran {
		t.Fatalf("RunFenced on a repository whose fences are lost = %v, ran %v; want ErrFenceLost before fn", err, ran)
	}
}
