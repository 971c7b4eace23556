package lanes_test

import (
	"context"
	"expvar"
	"fmt"
	"sync"
	"time"

	"github.com/rivus/collab/lanes"
)

// Hooks feed a metrics library; here the standard library's expvar, whose
// variables a process serves at /debug/vars. Any other library (a
// Prometheus histogram's Observe, an OpenTelemetry counter's Add) plugs in
// the same way.
func ExampleHooks() {
	var (
		depth    = new(expvar.Int)
		waited   = new(expvar.Float) // seconds spent waiting for a slot, summed
		ran      = new(expvar.Map)   // activations by how they ended
		timeouts = new(expvar.Int)
	)
	var done sync.WaitGroup
	done.Add(3)
	l, err := lanes.New(context.Background(), lanes.Config[string]{
		MaxConcurrent: 2,
		Activate:      func(context.Context, string) error { return nil },
		OnExit:        func(string, lanes.Exit) { done.Done() },
		Hooks: lanes.Hooks[string]{
			QueueDepth: func(n int) { depth.Set(int64(n)) },
			Waited:     func(_ string, d time.Duration) { waited.Add(d.Seconds()) },
			Ended:      func(_ string, _ time.Duration, exit lanes.Exit) { ran.Add(fmt.Sprintf("%T", exit), 1) },
			TimedOut:   func(string) { timeouts.Add(1) },
		},
	})
	if err != nil {
		panic(err)
	}
	for _, key := range []string{"a", "b", "c"} {
		if _, err := l.Wake(key); err != nil {
			panic(err)
		}
	}
	done.Wait()
	l.Close()
	fmt.Println("activations:", ran.String())
	// Output:
	// activations: {"lanes.Succeeded": 3}
}
