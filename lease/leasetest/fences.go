package leasetest

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rivus/collab/lease/store"
)

// testFenceExcludes: a second Fence on a held key returns only after the
// first unlock, and the fence does not stop the key's records from being
// written (a holder renews while its fenced work runs).
func testFenceExcludes(t *testing.T, r store.Repository) {
	unlock := fenceNow(t, r, "k")
	var unlocked atomic.Bool
	second := make(chan error, 1)
	go func() {
		u, err := r.Fence(t.Context(), "k")
		if err == nil {
			if !unlocked.Load() {
				err = errors.New("second Fence returned before the first unlock")
			}
			u()
		}
		second <- err
	}()
	wantFenceHeld(t, r, "k")
	select {
	case err := <-second:
		t.Fatalf("second Fence returned while the fence was held: %v", err)
	default:
	}
	rev := mustSave(t, r, "k", snapshot(1), 0)
	wantRecord(t, r, "k", snapshot(1), rev)
	unlocked.Store(true)
	unlock()
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	fenceNow(t, r, "k")()
}

// testFenceMutualExclusion: goroutines taking one fence in turns are never
// inside it together.
func testFenceMutualExclusion(t *testing.T, r store.Repository) {
	const goroutines, rounds = 8, 25
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Go(func() {
			for range rounds {
				unlock, err := r.Fence(t.Context(), "k")
				if err != nil {
					errs <- err
					return
				}
				raise(&most, inside.Add(1))
				runtime.Gosched() // give another goroutine the chance to enter wrongly
				inside.Add(-1)
				unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Fence: %v", err)
	}
	if m := most.Load(); m != 1 {
		t.Fatalf("%d goroutines held the fence at once", m)
	}
}

// testFenceKeysIndependent: holding one key's fence leaves the others'
// free.
func testFenceKeysIndependent(t *testing.T, r store.Repository) {
	a := fenceNow(t, r, "a")
	defer a()
	b := fenceNow(t, r, "b")
	defer b()
	wantFenceHeld(t, r, "a")
	wantFenceHeld(t, r, "b")
}

// testFenceCancelled: a Fence whose context has ended, before or while
// it waits, returns the cause and leaves the fence free.
func testFenceCancelled(t *testing.T, r store.Repository) {
	t.Run("before", func(t *testing.T) {
		cause := errors.New("caller gave up before")
		ctx, cancel := context.WithCancelCause(t.Context())
		cancel(cause)
		unlock, err := r.Fence(ctx, "before")
		if !errors.Is(err, cause) || unlock != nil {
			t.Fatalf("Fence with an ended context = %v (unlock %v), want its cause and no unlock", err, unlock != nil)
		}
		fenceNow(t, r, "before")()
	})
	t.Run("while waiting", func(t *testing.T) {
		holder := fenceNow(t, r, "waiting")
		cause := errors.New("caller gave up while waiting")
		ctx, cancel := context.WithCancelCause(t.Context())
		type result struct {
			unlock func()
			err    error
		}
		waiter := make(chan result, 1)
		go func() {
			u, err := r.Fence(ctx, "waiting")
			waiter <- result{u, err}
		}()
		wantFenceHeld(t, r, "waiting")
		cancel(cause)
		res := <-waiter
		if res.unlock != nil {
			res.unlock()
		}
		if !errors.Is(res.err, cause) || res.unlock != nil {
			t.Fatalf("Fence cancelled while waiting = %v (unlock %v), want its cause and no unlock", res.err, res.unlock != nil)
		}
		holder()
		fenceNow(t, r, "waiting")()
	})
}

// testFenceUnlockIdempotent: calling an unlock again does nothing, even
// when someone else holds the fence by then.
func testFenceUnlockIdempotent(t *testing.T, r store.Repository) {
	first := fenceNow(t, r, "k")
	first()
	first()
	second := fenceNow(t, r, "k")
	first()
	wantFenceHeld(t, r, "k")
	second()
	second()
	fenceNow(t, r, "k")()
}

// testFenceHeldThroughLoss: a fence stays held until its holder unlocks
// it, though the context the holder took it with ends and the callers
// waiting for it give up.
//
// Both happen at once when a lease is lost: the manager cancels the
// context of each of the holder's RunFenced calls, the context each took
// the fence with or waits for it with: the call that holds the fence,
// which may have re-read the record and be about to start its work, and
// those still waiting. The bug this catches is a waiter that,
// giving up, takes the key's lock away with it: a store that removes the
// lock file it opened when its wait ends, so as to leave no file behind
// for a key it never got, removes the file the holder has locked, and
// the next caller creates a new one and locks it at once. The successor,
// whose Fence is that next call, then starts its fenced work while the
// lost holder's starts too. (A fence that ends with its holder's context,
// such as a lock taken in a transaction that database/sql rolls back
// when the context ends, fails here the same way.)
func testFenceHeldThroughLoss(t *testing.T, r store.Repository) {
	lost := errors.New("lease lost")
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	unlock, err := r.Fence(ctx, "k")
	if err != nil {
		t.Fatalf("Fence(%q) on a free fence: %v", "k", err)
	}
	const waiters = 3
	results := make(chan error, waiters)
	for range waiters {
		go func() {
			u, err := r.Fence(ctx, "k")
			if err == nil {
				u()
				err = errors.New("a waiting Fence returned while the fence was held")
			}
			results <- err
		}()
	}
	wantFenceHeld(t, r, "k") // one more caller, who gives up
	cancel(lost)
	for range waiters {
		if err := <-results; !errors.Is(err, lost) {
			t.Fatalf("Fence waiting for a held fence when its context ended = %v, want its cause", err)
		}
	}
	wantFenceHeld(t, r, "k")
	unlock()
	fenceNow(t, r, "k")()
}

// testFenceOtherHandle: a fence held through one handle keeps another
// handle's Fence waiting, through callers that give up, until it is
// unlocked.
func testFenceOtherHandle(t *testing.T, dir string, open func(*testing.T, string) store.Repository) {
	a, b := open(t, dir), open(t, dir)
	unlock := fenceNow(t, a, "k")
	wantFenceHeld(t, b, "k")
	wantFenceHeld(t, b, "k") // the first caller's giving up freed nothing
	unlock()
	fenceNow(t, b, "k")()
	fenceNow(t, a, "k")()
}

// raise sets highest to n if n is larger.
func raise(highest *atomic.Int32, n int32) {
	for {
		m := highest.Load()
		if n <= m || highest.CompareAndSwap(m, n) {
			return
		}
	}
}
