package keylock

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestKeyLocksForgetFreeKeys: a key's entry lives only while it is held,
// waited for or not.
func TestKeyLocksForgetFreeKeys(t *testing.T) {
	var l Locks
	ctx := t.Context()
	for i := range 100 {
		unlock, err := l.Lock(ctx, strings.Repeat("k", i+1))
		if err != nil {
			t.Fatal(err)
		}
		unlock()
	}
	if n := l.Size(); n != 0 {
		t.Fatalf("%d entries after every lock was released", n)
	}
	unlock, err := l.Lock(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	waiterCtx, cancel := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() {
		_, err := l.Lock(waiterCtx, "held")
		waited <- err
	}()
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter = %v", err)
	}
	if n := l.Size(); n != 1 {
		t.Fatalf("%d entries with one key held, want 1", n)
	}
	unlock()
	if n := l.Size(); n != 0 {
		t.Fatalf("%d entries after the last unlock", n)
	}
}

// TestKeyLocksHandOver: every waiter gets the lock in turn; none is lost
// when others give up.
func TestKeyLocksHandOver(t *testing.T) {
	var l Locks
	ctx := t.Context()
	unlock, err := l.Lock(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 10
	var wg sync.WaitGroup
	got := make(chan int, waiters)
	giveUp, cancel := context.WithCancel(ctx)
	for i := range waiters {
		wctx := ctx
		if i%2 == 1 {
			wctx = giveUp
		}
		wg.Go(func() {
			u, err := l.Lock(wctx, "k")
			if err != nil {
				return
			}
			got <- i
			u()
		})
	}
	cancel()
	unlock()
	wg.Wait()
	close(got)
	n := 0
	for i := range got {
		if i%2 == 0 {
			n++
		}
	}
	if n != waiters/2 {
		t.Fatalf("%d of %d patient waiters got the lock", n, waiters/2)
	}
	if s := l.Size(); s != 0 {
		t.Fatalf("%d entries left", s)
	}
}
