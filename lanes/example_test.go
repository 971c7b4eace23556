package lanes_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/rivus/collab/lanes"
)

// One slot: the first room starts, the others wait, and waking a room
// again is served by the activation it already has coming. Close
// interrupts what runs and drops what waits; OnExit hears both.
func Example() {
	var (
		mu    sync.Mutex
		exits []string
	)
	l, err := lanes.New(context.Background(), lanes.Config[string]{
		MaxConcurrent: 1,
		Activate: func(ctx context.Context, room string) error {
			<-ctx.Done() // a long turn, until the lanes interrupt it
			return ctx.Err()
		},
		OnExit: func(room string, exit lanes.Exit) {
			mu.Lock()
			defer mu.Unlock()
			exits = append(exits, room+": "+exit.String())
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	wake := func(room string) {
		r, err := l.Wake(room)
		if err != nil {
			fmt.Println(room, err)
			return
		}
		fmt.Println(room, r)
	}
	wake("room:1") // a slot is free
	wake("room:2") // room:1 holds the slot
	wake("room:2") // room:2 already waits
	wake("room:1") // room:1 runs: it owes one more activation
	wake("room:1")
	l.Close()
	wake("room:3")

	slices.Sort(exits) // OnExit calls come from several goroutines
	for _, e := range exits {
		fmt.Println(e)
	}
	// Output:
	// room:1 started
	// room:2 queued
	// room:2 coalesced
	// room:1 queued
	// room:1 coalesced
	// room:3 lanes: closed
	// room:1: interrupted before it started: lanes: closed
	// room:1: interrupted: lanes: closed
	// room:2: interrupted before it started: lanes: closed
}

// A bounded queue refuses a wake it has no place for; the caller decides
// what to do, here to try again later.
func ExampleLanes_Wake_queueFull() {
	release := make(chan struct{})
	l, err := lanes.New(context.Background(), lanes.Config[int]{
		MaxConcurrent: 1,
		MaxQueued:     1,
		Activate: func(ctx context.Context, job int) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	for job := range 3 {
		r, err := l.Wake(job)
		switch {
		case errors.Is(err, lanes.ErrQueueFull):
			fmt.Println(job, "refused: try later")
		case err != nil:
			fmt.Println(job, err)
		default:
			fmt.Println(job, r)
		}
	}
	close(release)
	// Output:
	// 0 started
	// 1 queued
	// 2 refused: try later
}

// Cancel drops what a key owes and waits for its activation to end.
func ExampleLanes_Cancel() {
	running := make(chan struct{})
	var (
		mu    sync.Mutex
		exits []string
	)
	l, err := lanes.New(context.Background(), lanes.Config[string]{
		Activate: func(ctx context.Context, key string) error {
			close(running)
			<-ctx.Done()
			return ctx.Err()
		},
		OnExit: func(key string, exit lanes.Exit) {
			mu.Lock()
			defer mu.Unlock()
			exits = append(exits, key+": "+exit.String())
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	l.Wake("job")
	l.Wake("job") // a follow-up, owed
	<-running
	if err := l.Cancel(context.Background(), "job"); err != nil {
		fmt.Println(err)
	}
	// Cancel has returned: OnExit has heard both, from two goroutines.
	slices.Sort(exits)
	for _, e := range exits {
		fmt.Println(e)
	}
	// Output:
	// job: interrupted before it started: lanes: cancelled
	// job: interrupted: lanes: cancelled
}

// Invalid settings are refused with the field they concern.
func ExampleNew_invalid() {
	_, err := lanes.New(context.Background(), lanes.Config[string]{MaxConcurrent: -1})
	var ce *lanes.ConfigError
	if errors.As(err, &ce) {
		fmt.Println(ce.Field)
	}
	// Output:
	// MaxConcurrent
}

// Work per key, one activation at a time for each key, at most two at
// once: a key woken while it runs is activated once more after.
func ExampleNew() {
	gate, done := make(chan struct{}), make(chan string, 3)
	l, err := lanes.New(context.Background(), lanes.Config[string]{
		MaxConcurrent: 2,
		Activate: func(ctx context.Context, room string) error {
			<-gate
			done <- room
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()

	for _, room := range []string{"room:1", "room:2", "room:1"} {
		r, err := l.Wake(room)
		fmt.Println(room, r, err)
	}
	close(gate)
	activated := []string{<-done, <-done, <-done}
	slices.Sort(activated)
	fmt.Println(activated)
	// Output:
	// room:1 started <nil>
	// room:2 started <nil>
	// room:1 queued <nil>
	// [room:1 room:1 room:2]
}
