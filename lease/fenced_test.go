package lease_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform/platformtest"
)

// runFencedAsync calls h.RunFenced(ctx, fn) in a goroutine and delivers
// its result.
func runFencedAsync(ctx context.Context, h *lease.Lease, fn func(context.Context, lease.Token) error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- h.RunFenced(ctx, fn) }()
	return done
}

// receive waits for a value on ch, failing the test after waitLimit.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("waited %v for %s", waitLimit, what)
		panic("unreachable")
	}
}

// refuse is fenced work that must not run.
func refuse(t *testing.T) func(context.Context, lease.Token) error {
	return func(context.Context, lease.Token) error {
		t.Error("fenced work ran")
		return nil
	}
}

// TestRunFencedToken: the work runs with the lease's token and its error
// comes back unchanged.
func TestRunFencedToken(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		m, _ := newManager(t, f.Platform, repo)
		mustAcquire(t, m, "k").Close()
		h := mustAcquire(t, m, "k")
		errWork := errors.New("work failed")
		var got lease.Token
		err := h.RunFenced(t.Context(), func(ctx context.Context, tok lease.Token) error {
			got = tok
			return errWork
		})
		if err != errWork || got != h.Token() || got != 2 {
			t.Fatalf("RunFenced = %v with token %d, want the work's error with token %d", err, got, h.Token())
		}
	})
}

// TestRunFencedHoldsFence: the work runs holding the key's fence, and the
// fence is free again once the work returns.
func TestRunFencedHoldsFence(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		m, _ := newManager(t, f.Platform, repo)
		h := mustAcquire(t, m, "k")
		started, finish := make(chan struct{}), make(chan struct{})
		var returned atomic.Bool
		done := runFencedAsync(t.Context(), h, func(context.Context, lease.Token) error {
			close(started)
			<-finish
			returned.Store(true)
			return nil
		})
		receive(t, started, "the fenced work to start")
		other := fenceAsync(t.Context(), repo, "k")
		select {
		case res := <-other:
			t.Fatalf("Fence taken while fenced work runs (%v)", res.err)
		default:
		}
		close(finish)
		res := receive(t, other, "the fence after the work returned")
		if res.err != nil {
			t.Fatal(res.err)
		}
		if !returned.Load() {
			t.Fatal("the fence was free before the work returned")
		}
		res.unlock()
		if err := receive(t, done, "RunFenced"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRunFencedSuccessorWaits: after a takeover, the successor's fenced
// work starts only once the old holder's work (which has not noticed the
// takeover) has returned, and the old holder's next RunFenced is refused.
func TestRunFencedSuccessorWaits(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, inner store.Repository) {
		repo := newFaultRepo(inner, f.Clock)
		id := f.Processes.Start()
		holder, _ := newManager(t, frozen(f, id), repo)
		old := mustAcquire(t, holder, "k")
		oldStarted, oldFinish := make(chan struct{}), make(chan struct{})
		var oldReturned atomic.Bool
		oldDone := runFencedAsync(t.Context(), old, func(context.Context, lease.Token) error {
			close(oldStarted)
			<-oldFinish
			oldReturned.Store(true)
			return nil
		})
		receive(t, oldStarted, "the old holder's work to start")

		m, _ := newManager(t, f.Platform, repo)
		wantHeld(t, m, "k", id)
		advance(f.Clock, ttl)
		h := mustAcquire(t, m, "k")
		for len(repo.fence) > 0 {
			<-repo.fence
		}
		newStarted := make(chan bool, 1)
		newDone := runFencedAsync(t.Context(), h, func(_ context.Context, tok lease.Token) error {
			newStarted <- oldReturned.Load()
			return nil
		})
		receive(t, repo.fence, "the successor to wait for the fence")
		select {
		case <-newStarted:
			t.Fatal("the successor's work started while the old holder's ran")
		default:
		}
		close(oldFinish)
		if err := receive(t, oldDone, "the old holder's RunFenced"); err != nil {
			t.Fatalf("old holder's RunFenced = %v; its work ran to the end", err)
		}
		if !receive(t, newStarted, "the successor's work") {
			t.Fatal("the successor's work started before the old holder's returned")
		}
		if err := receive(t, newDone, "the successor's RunFenced"); err != nil {
			t.Fatal(err)
		}
		if err := old.RunFenced(t.Context(), refuse(t)); !errors.Is(err, lease.ErrLost) {
			t.Fatalf("old holder's next RunFenced = %v, want ErrLost", err)
		}
		wantLost(t, old)
	})
}

// TestRunFencedRereadRefuses: RunFenced re-reads the record under the
// fence; a record that no longer holds the lease's generation refuses
// the work and declares the lease lost at once, without a renewal.
func TestRunFencedRereadRefuses(t *testing.T) {
	tests := []struct {
		name string
		snap func(store.Snapshot) store.Snapshot
	}{
		{"successor", func(s store.Snapshot) store.Snapshot {
			s.Generation++
			s.Holder = stranger
			return s
		}},
		{"tombstone", func(s store.Snapshot) store.Snapshot { s.Released = true; return s }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
				m, rec := newManager(t, f.Platform, repo)
				h := mustAcquire(t, m, "k")
				writeBehind(t, repo, "k", tt.snap(mustLoad(t, repo, "k").Snapshot))
				if err := h.RunFenced(t.Context(), refuse(t)); !errors.Is(err, lease.ErrLost) {
					t.Fatalf("RunFenced = %v, want ErrLost", err)
				}
				wantLost(t, h)
				if evs, _ := rec.of(lease.Lost); len(evs) != 1 || evs[0].Token != h.Token() {
					t.Fatalf("lost events %+v", evs)
				}
			})
		})
	}
}

// TestRunFencedWaitStopsOnLoss: a RunFenced waiting for a fence that
// someone else holds returns ErrLost as soon as the lease is lost,
// without running the work.
func TestRunFencedWaitStopsOnLoss(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, inner store.Repository) {
		repo := newFaultRepo(inner, f.Clock)
		m, _ := newManager(t, f.Platform, repo)
		h := mustAcquire(t, m, "k")
		unlock, err := inner.Fence(t.Context(), "k")
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		done := runFencedAsync(t.Context(), h, refuse(t))
		receive(t, repo.fence, "RunFenced to wait for the fence")
		writeBehind(t, inner, "k", store.Snapshot{Generation: h.Token() + 1, Holder: stranger, TTL: ttl})
		step(t, f.Clock, hb)
		if err := receive(t, done, "RunFenced after the loss"); !errors.Is(err, lease.ErrLost) {
			t.Fatalf("RunFenced = %v, want ErrLost", err)
		}
		wantLost(t, h)
	})
}

// TestRunFencedCancelledOnLoss: the work's context is cancelled with
// cause ErrLost when the lease is lost, and RunFenced's error says so.
func TestRunFencedCancelledOnLoss(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		m, _ := newManager(t, f.Platform, repo)
		h := mustAcquire(t, m, "k")
		started, cause := make(chan struct{}), make(chan error, 1)
		done := runFencedAsync(t.Context(), h, func(ctx context.Context, _ lease.Token) error {
			close(started)
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return ctx.Err()
		})
		receive(t, started, "the fenced work")
		writeBehind(t, repo, "k", store.Snapshot{Generation: h.Token() + 1, Holder: stranger, TTL: ttl})
		step(t, f.Clock, hb)
		c := receive(t, cause, "the work's context to end")
		if loss, ok := errors.AsType[*lease.LossError](c); !ok || !errors.Is(c, lease.ErrLost) || loss.Cause != lease.LostMoved || loss.Record == nil || loss.Record.Holder != stranger {
			t.Fatalf("work cancelled with %v, want a *LossError: moved to the stranger", c)
		}
		err := receive(t, done, "RunFenced")
		if !errors.Is(err, lease.ErrLost) || !errors.Is(err, context.Canceled) {
			t.Fatalf("RunFenced = %v, want ErrLost wrapping the work's error", err)
		}
		wantLost(t, h)
		// The fence is free once the work has returned.
		res := receive(t, fenceAsync(t.Context(), repo, "k"), "the fence")
		if res.err != nil {
			t.Fatal(res.err)
		}
		res.unlock()
	})
}

// TestRunFencedCancelledOnClose: Close cancels running fenced work with
// cause ErrReleased, and a later RunFenced is refused with ErrReleased.
func TestRunFencedCancelledOnClose(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		m, _ := newManager(t, f.Platform, repo)
		h := mustAcquire(t, m, "k")
		started, cause := make(chan struct{}), make(chan error, 1)
		done := runFencedAsync(t.Context(), h, func(ctx context.Context, _ lease.Token) error {
			close(started)
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return nil
		})
		receive(t, started, "the fenced work")
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		if c := receive(t, cause, "the work's context to end"); !errors.Is(c, lease.ErrReleased) {
			t.Fatalf("work cancelled with %v, want ErrReleased", c)
		}
		if err := receive(t, done, "RunFenced"); err != nil {
			t.Fatalf("RunFenced = %v, want the work's nil", err)
		}
		wantReleased(t, h)
		if err := h.RunFenced(t.Context(), refuse(t)); !errors.Is(err, lease.ErrReleased) {
			t.Fatalf("RunFenced after Close = %v, want ErrReleased", err)
		}
	})
}

// TestRunFencedCallerContext: a caller's cancelled context stops the wait
// for the fence with its own cause, and the lease stays held.
func TestRunFencedCallerContext(t *testing.T) {
	f := platformtest.New(t)
	repo := newFaultRepo(lease.NewMemoryRepository(), f.Clock)
	m, _ := newManager(t, f.Platform, repo)
	h := mustAcquire(t, m, "k")
	unlock, err := repo.Fence(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	<-repo.fence
	cause := errors.New("caller gave up")
	ctx, cancel := context.WithCancelCause(t.Context())
	done := runFencedAsync(ctx, h, refuse(t))
	receive(t, repo.fence, "RunFenced to wait for the fence")
	cancel(cause)
	if err := receive(t, done, "RunFenced"); err != cause {
		t.Fatalf("RunFenced = %v, want the caller's cause", err)
	}
	wantNotEnded(t, h)
}

// TestRunFencedExclusiveUntilSuccessor: many goroutines run fenced work
// on one lease while a successor takes the fence, writes a new
// generation and lets go: fenced works never overlap, none starts after
// the successor's write, and every refused one reports ErrLost.
func TestRunFencedExclusiveUntilSuccessor(t *testing.T) {
	forKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository) {
		m, _ := newManager(t, f.Platform, repo)
		h := mustAcquire(t, m, "k")
		const workers, runs = 4, 25
		var inside, ran atomic.Int32
		var written atomic.Bool
		quarter, once := make(chan struct{}), sync.Once{}
		work := func(context.Context, lease.Token) error {
			if n := inside.Add(1); n != 1 {
				t.Errorf("%d fenced works at once", n)
			}
			if written.Load() {
				t.Error("fenced work started after the successor's write")
			}
			if ran.Add(1) == workers*runs/4 {
				once.Do(func() { close(quarter) })
			}
			inside.Add(-1)
			return nil
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range workers {
			wg.Go(func() {
				<-start
				for range runs {
					if err := h.RunFenced(t.Context(), work); err != nil && !errors.Is(err, lease.ErrLost) {
						t.Errorf("RunFenced = %v", err)
					}
				}
			})
		}
		wg.Go(func() {
			<-quarter // the successor comes while the holder's works run
			unlock, err := repo.Fence(t.Context(), "k")
			if err != nil {
				t.Error(err)
				return
			}
			defer unlock()
			rec, _, err := repo.Load(t.Context(), "k")
			if err != nil {
				t.Error(err)
				return
			}
			s := store.Snapshot{Generation: rec.Snapshot.Generation + 1, Holder: stranger, TTL: ttl}
			if _, err := repo.Save(t.Context(), "k", s, rec.Revision); err != nil {
				t.Error(err)
				return
			}
			written.Store(true)
		})
		close(start)
		wg.Wait()
		if err := h.RunFenced(t.Context(), refuse(t)); !errors.Is(err, lease.ErrLost) {
			t.Fatalf("RunFenced after the successor = %v, want ErrLost", err)
		}
		wantLost(t, h)
		t.Logf("%d of %d fenced works ran before the successor", ran.Load(), workers*runs)
	})
}
