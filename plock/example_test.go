package plock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rivus/collab/platform/sqlite"
	"github.com/rivus/collab/plock"
)

// One task holds the lock; IsHeld says so without touching it; a second
// task that does not wait gets a *HeldError (ErrHeld) at once, and one that waits
// gets the lock when the first releases it.
func Example() {
	dir, err := os.MkdirTemp("", "plock-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ctx, p, path := context.Background(), sqlite.OS(), filepath.Join(dir, "app.lock")

	first, err := plock.Acquire(ctx, p, path, plock.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	held, _ := plock.IsHeld(ctx, p, path)
	fmt.Println("held:", held)

	_, err = plock.Acquire(ctx, p, path, plock.Options{})
	fmt.Println("second without waiting is held:", errors.Is(err, plock.ErrHeld))

	got := make(chan error)
	go func() {
		second, err := plock.Acquire(ctx, p, path, plock.Options{Wait: true})
		if err == nil {
			err = second.Release()
		}
		got <- err
	}()
	fmt.Println("first released:", first.Release())
	fmt.Println("waiting second acquired and released:", <-got)

	held, _ = plock.IsHeld(ctx, p, path)
	fmt.Println("held:", held)
	// Output:
	// held: true
	// second without waiting is held: true
	// first released: <nil>
	// waiting second acquired and released: <nil>
	// held: false
}

// A program that must run once per machine takes the lock as it starts
// and holds it until it exits; the kernel frees it if the process dies.
func ExampleAcquire() {
	dir, err := os.MkdirTemp("", "plock-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ctx, p, path := context.Background(), sqlite.OS(), filepath.Join(dir, "app.lock")

	lock, err := plock.Acquire(ctx, p, path, plock.Options{})
	if errors.Is(err, plock.ErrHeld) {
		fmt.Println("another instance runs:", err)
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lock.Release()

	held, _ := plock.IsHeld(ctx, p, path) // writes nothing: any process may ask
	fmt.Println("the only instance; held:", held)
	// Output: the only instance; held: true
}
