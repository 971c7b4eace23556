package lanes

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rivus/collab/platform/platformtest"
)

// hookLog records what the hooks hear, one line each.
type hookLog struct {
	mu    sync.Mutex
	lines []string
}

func (h *hookLog) add(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, fmt.Sprintf(format, args...))
}

func (h *hookLog) get() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.lines)
}

// The hooks hear queue depths, waits and run times on the lanes' clock,
// timeouts and panics.
func TestHooks(t *testing.T) {
	clock := platformtest.NewClock()
	g := newGate[string]()
	var h hookLog
	cfg := g.config(1, 0)
	gated := cfg.Activate
	cfg.Activate = func(ctx context.Context, key string) error {
		if key == "p" {
			panic("boom")
		}
		return gated(ctx, key)
	}
	cfg.Clock = clock
	cfg.TurnTimeout = time.Minute
	cfg.Hooks = Hooks[string]{
		QueueDepth: func(n int) { h.add("depth %d", n) },
		Waited:     func(key string, d time.Duration) { h.add("%s waited %v", key, d) },
		Ended:      func(key string, d time.Duration, e Exit) { h.add("%s ran %v: %v", key, d, e) },
		TimedOut:   func(key string) { h.add("%s timed out", key) },
		Panicked:   func(key string, v any) { h.add("%s panicked: %v", key, v) },
	}
	l := newLanes(t, cfg)

	wakeWant(t, l, "a", Started)
	g.nextStart(t, "a")
	wakeWant(t, l, "b", Queued)
	clock.Advance(5 * time.Second)
	g.release("a")
	g.nextExit(t, "a")
	g.nextStart(t, "b") // a's step is done: b waited 5 s
	clock.Advance(time.Minute)
	g.nextExit(t, "b")
	// b's exit was heard, but its lane may not have stepped yet: Cancel
	// returns once it has (b owes nothing, so it drops nothing).
	if err := l.Cancel(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	wakeWant(t, l, "p", Started)
	g.nextExit(t, "p")
	l.Close()

	want := []string{
		"depth 1",
		"a ran 5s: succeeded",
		"b waited 5s", // heard as b leaves the queue; the depth once the step is over
		"depth 0",
		"b timed out",
		"b ran 1m0s: interrupted: lanes: turn timeout",
		"p ran 0s: failed: lanes: activation panicked: boom",
		"p panicked: boom",
	}
	if got := h.get(); !slices.Equal(got, want) {
		t.Errorf("hooks heard\n%q\nwant\n%q", got, want)
	}
}
