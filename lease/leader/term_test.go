package leader_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/leader"
	"github.com/rivus/collab/lease/store"
)

// releaseHook watches the release of a lease (a Save of a released
// snapshot): it calls onRelease after one is written, or fails it with
// failWith.
type releaseHook struct {
	store.Repository
	onRelease func()
	failWith  error
}

func (r *releaseHook) Save(ctx context.Context, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	if s.Released && r.failWith != nil {
		return 0, r.failWith
	}
	rev, err := r.Repository.Save(ctx, key, s, expected)
	if s.Released && err == nil && r.onRelease != nil {
		r.onRelease()
	}
	return rev, err
}

func newManager(t *testing.T, repo store.Repository) *lease.Manager {
	t.Helper()
	m, err := lease.NewManager(lease.Config{TTL: ttl, Heartbeat: ttl / 10, Repository: repo})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestLeadContextEndsBeforeTheRelease: when Lead returns on its own, its
// context is cancelled before the lease is let go, so that nothing Lead
// started on it acts once another process may lead; OnStopped runs after.
func TestLeadContextEndsBeforeTheRelease(t *testing.T) {
	var leadCtx atomic.Pointer[context.Context]
	liveAtRelease := make(chan bool, 1)
	repo := &releaseHook{Repository: lease.NewMemoryRepository()}
	repo.onRelease = func() { liveAtRelease <- (*leadCtx.Load()).Err() == nil }
	liveAtStopped := true
	err := leader.Run(t.Context(), leader.Config{Manager: newManager(t, repo), Key: "k",
		Lead:      func(ctx context.Context, _ lease.Token) error { leadCtx.Store(&ctx); return nil },
		OnStopped: func(lease.Token, error) { liveAtStopped = (*leadCtx.Load()).Err() == nil },
	})
	if err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if <-liveAtRelease {
		t.Error("the lease was let go while Lead's context was live")
	}
	if liveAtStopped {
		t.Error("Lead's context was live in OnStopped")
	}
}

// TestPanicEndsTheTerm: a panic in OnStarted or Lead still ends the term
// as a return does: the lease is let go, OnStopped hears ErrLeadPanicked,
// and the panic goes on to Run's caller.
func TestPanicEndsTheTerm(t *testing.T) {
	for _, where := range []string{"OnStarted", "Lead"} {
		t.Run(where, func(t *testing.T) {
			repo := lease.NewMemoryRepository()
			m := newManager(t, repo)
			cfg := leader.Config{Manager: m, Key: "k", Lead: func(context.Context, lease.Token) error { return nil }}
			if where == "Lead" {
				cfg.Lead = func(context.Context, lease.Token) error { panic("boom") }
			} else {
				cfg.OnStarted = func(lease.Token) { panic("boom") }
			}
			var stopped error
			cfg.OnStopped = func(_ lease.Token, cause error) { stopped = cause }
			var recovered any
			func() {
				defer func() { recovered = recover() }()
				_ = leader.Run(t.Context(), cfg)
			}()
			if recovered != "boom" {
				t.Errorf("Run's caller recovered %v, want the panic", recovered)
			}
			if !errors.Is(stopped, leader.ErrLeadPanicked) {
				t.Errorf("OnStopped heard %v, want ErrLeadPanicked", stopped)
			}
			if rec, _, _ := repo.Load(t.Context(), "k"); !rec.Snapshot.Released {
				t.Errorf("record %+v after the panic, want released", rec.Snapshot)
			}
			l, err := m.Acquire(t.Context(), "k")
			if err != nil {
				t.Fatalf("Acquire after the panic = %v, want the lease", err)
			}
			l.Close()
		})
	}
}

// TestLeadNeverBeginsOnAnEndedLease: a lease that ended before Lead
// begins (here the Manager closed in OnStarted) gives Lead a context
// cancelled already. One processor makes it certain that the goroutine
// which watches the lease has not run by then.
func TestLeadNeverBeginsOnAnEndedLease(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	m := newManager(t, lease.NewMemoryRepository())
	liveOnEntry := true
	err := leader.Run(t.Context(), leader.Config{Manager: m, Key: "k",
		OnStarted: func(lease.Token) { m.Close() },
		Lead: func(ctx context.Context, _ lease.Token) error {
			liveOnEntry = ctx.Err() == nil
			<-ctx.Done()
			return nil
		}})
	if !errors.Is(err, lease.ErrClosed) {
		t.Fatalf("Run = %v, want lease.ErrClosed", err)
	}
	if liveOnEntry {
		t.Error("Lead began with a live context on a lease that had ended")
	}
}

// TestKeyTheRepositoriesRefuse: a Key no repository takes is a
// *ConfigError at once, not an error reported at every attempt.
func TestKeyTheRepositoriesRefuse(t *testing.T) {
	m := newManager(t, lease.NewMemoryRepository())
	for _, key := range []string{"bad\x00key", "\xff", strings.Repeat("k", store.MaxKeyLen+1)} {
		var ce *leader.ConfigError
		err := leader.Run(t.Context(), leader.Config{Manager: m, Key: key, Lead: func(context.Context, lease.Token) error { return nil },
			OnError: func(err error) { t.Errorf("OnError heard %v", err) }})
		if !errors.As(err, &ce) || ce.Field != "Key" {
			t.Errorf("Run with Key %q = %v, want a *ConfigError naming Key", key, err)
		}
	}
}

// TestReleaseErrorReported: a lease that cannot be let go stays held for
// a TTL; OnError hears why.
func TestReleaseErrorReported(t *testing.T) {
	errRelease := errors.New("release failed")
	repo := &releaseHook{Repository: lease.NewMemoryRepository(), failWith: errRelease}
	var reported []error
	err := leader.Run(t.Context(), leader.Config{Manager: newManager(t, repo), Key: "k",
		OnError: func(err error) { reported = append(reported, err) },
		Lead:    func(context.Context, lease.Token) error { return nil }})
	if err != nil {
		t.Fatalf("Run = %v, want Lead's nil", err)
	}
	if len(reported) != 1 || !errors.Is(reported[0], errRelease) {
		t.Errorf("OnError heard %v, want the failed release", reported)
	}
}
