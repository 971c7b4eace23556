package lease_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/sqlite"
)

// A manager acquires a lease, does fenced work with its token, and
// releases it on Close. A second acquisition while the lease is held gets
// a *HeldError.
func Example() {
	ctx := context.Background()
	repo := lease.NewMemoryRepository()
	leases, err := lease.NewManager(lease.Config{TTL: time.Minute, Heartbeat: 15 * time.Second, Repository: repo})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer leases.Close()

	l, err := leases.Acquire(ctx, "task:42")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("token:", l.Token())

	_, err = leases.Acquire(ctx, "task:42")
	fmt.Println("held by a live holder:", errors.Is(err, lease.ErrHeld))

	err = l.RunFenced(ctx, func(ctx context.Context, token lease.Token) error {
		fmt.Println("saving the result with token", token)
		return nil
	})
	fmt.Println("fenced work:", err)

	fmt.Println("close:", l.Close(), "then:", l.Err())
	rec, _, _ := repo.Load(ctx, "task:42")
	fmt.Println("tombstone keeps generation", rec.Snapshot.Generation, "released:", rec.Snapshot.Released)

	l, _ = leases.Acquire(ctx, "task:42")
	fmt.Println("next token:", l.Token())
	// Output:
	// token: 1
	// held by a live holder: true
	// saving the result with token 1
	// fenced work: <nil>
	// close: <nil> then: lease: released
	// tombstone keeps generation 1 released: true
	// next token: 2
}

// RunFenced cancels the work's context with cause ErrLost when the lease
// is lost, here because another writer moved the record.
func ExampleLease_RunFenced() {
	ctx := context.Background()
	repo := lease.NewMemoryRepository()
	leases, _ := lease.NewManager(lease.Config{TTL: time.Minute, Heartbeat: 15 * time.Second, Repository: repo})
	defer leases.Close()
	l, _ := leases.Acquire(ctx, "task:42")

	// Another writer takes the key over behind the holder's back.
	rec, _, _ := repo.Load(ctx, "task:42")
	rec.Snapshot.Generation++
	if _, err := repo.Save(ctx, "task:42", rec.Snapshot, rec.Revision); err != nil {
		fmt.Println(err)
		return
	}

	// The re-read under the fence sees it: the work does not run.
	err := l.RunFenced(ctx, func(ctx context.Context, token lease.Token) error {
		fmt.Println("not printed")
		return nil
	})
	// The error says why: the record moved to another generation, whose
	// holder it names.
	loss, _ := errors.AsType[*lease.LossError](err)
	fmt.Println(errors.Is(err, lease.ErrLost), loss.Cause, loss.Record.Generation)
	fmt.Println("Err is the same loss:", l.Err() == err)
	// Output:
	// true moved 2
	// Err is the same loss: true
}

// Close releases every lease of the manager and stops its heartbeat;
// fenced work still running sees its context cancelled with cause
// ErrReleased.
func ExampleManager_Close() {
	ctx := context.Background()
	leases, _ := lease.NewManager(lease.Config{TTL: time.Minute, Heartbeat: 15 * time.Second, Repository: lease.NewMemoryRepository()})
	a, _ := leases.Acquire(ctx, "a")
	b, _ := leases.Acquire(ctx, "b")

	started, done := make(chan struct{}), make(chan error)
	go func() {
		done <- a.RunFenced(ctx, func(ctx context.Context, _ lease.Token) error {
			close(started)
			<-ctx.Done()
			return context.Cause(ctx)
		})
	}()
	<-started

	fmt.Println("close:", leases.Close())
	fmt.Println("fenced work ended with:", <-done)
	fmt.Println("a:", a.Err(), "b:", b.Err())
	_, err := leases.Acquire(ctx, "c")
	fmt.Println("acquire after close fails:", err != nil)
	// Output:
	// close: <nil>
	// fenced work ended with: lease: released: the manager was closed
	// a: lease: released: the manager was closed b: lease: released: the manager was closed
	// acquire after close fails: true
}

// A worker waits for a task's lease while another worker holds it, and
// takes it over soon after the holder is done.
func ExampleManager_AcquireWait() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	repo := lease.NewMemoryRepository()
	first, _ := lease.NewManager(lease.Config{TTL: time.Second, Heartbeat: 250 * time.Millisecond, Repository: repo})
	defer first.Close()
	second, _ := lease.NewManager(lease.Config{TTL: time.Second, Heartbeat: 250 * time.Millisecond, Repository: repo})
	defer second.Close()

	held, _ := first.Acquire(ctx, "task:42")
	done := make(chan struct{})
	go func() {
		defer close(done)
		l, err := second.AcquireWait(ctx, "task:42")
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("the waiter holds token", l.Token())
	}()
	fmt.Println("the first holds token", held.Token())
	held.Close()
	<-done
	// Output:
	// the first holds token 1
	// the waiter holds token 2
}

// Leases on SQLite: a worker claims a task, writes its result under the
// fence with the lease's token, and releases the task.
func Example_sqlite() {
	dir, err := os.MkdirTemp("", "lease-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	repo, err := sqlite.Open(nil, filepath.Join(dir, "leases.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer repo.Close()
	leases, err := lease.NewManager(lease.Config{TTL: time.Minute, Heartbeat: 15 * time.Second, Repository: repo})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer leases.Close()

	ctx := context.Background()
	task, err := leases.Acquire(ctx, "task:42") // a *HeldError while another worker holds it
	if err != nil {
		fmt.Println(err)
		return
	}
	defer task.Close()
	err = task.RunFenced(ctx, func(ctx context.Context, token lease.Token) error {
		// ctx ends if the lease is lost; a resource that can compare
		// keeps the highest token it has seen, and refuses smaller ones.
		fmt.Println("saving the result with token", token)
		return nil
	})
	fmt.Println("fenced work:", err)
	// Output:
	// saving the result with token 1
	// fenced work: <nil>
}
