package lanes_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rivus/collab/lanes"
)

// Hooks hear each key's events, for logs, traces or accounts per key;
// here a line for each activation as it ends. (For metrics, which hear no
// keys, see Metrics.) With one slot, the keys run in the order they were
// woken.
func ExampleHooks() {
	var (
		mu    sync.Mutex
		lines []string
		done  sync.WaitGroup
	)
	done.Add(3)
	l, err := lanes.New(context.Background(), lanes.Config[string]{
		MaxConcurrent: 1,
		Activate: func(_ context.Context, key string) error {
			if key == "b" {
				return fmt.Errorf("no room for %s", key)
			}
			return nil
		},
		OnExit: func(string, lanes.Exit) { done.Done() },
		Hooks: lanes.Hooks[string]{
			Ended: func(key string, _ time.Duration, exit lanes.Exit) {
				mu.Lock()
				defer mu.Unlock()
				lines = append(lines, key+": "+exit.String())
			},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, key := range []string{"a", "b", "c"} {
		if _, err := l.Wake(key); err != nil {
			fmt.Println(err)
		}
	}
	done.Wait()
	l.Close()
	for _, line := range lines {
		fmt.Println(line)
	}
	// Output:
	// a: succeeded
	// b: failed: no room for b
	// c: succeeded
}
