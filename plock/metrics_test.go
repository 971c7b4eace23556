package plock_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rivus/collab/platform/sqlite"
	"github.com/rivus/collab/plock"
)

// metricsLog is a plock.Metrics that writes each call down.
type metricsLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *metricsLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, s)
}

func (l *metricsLog) Acquired(took time.Duration) { l.add(fmt.Sprintf("acquired %v", took >= 0)) }
func (l *metricsLog) Refused()                    { l.add("refused") }
func (l *metricsLog) GaveUp(waited time.Duration) { l.add(fmt.Sprintf("gave up %v", waited >= 0)) }

// TestMetrics: Acquire tells its metrics whether it took the lock, was
// refused, or gave up waiting.
func TestMetrics(t *testing.T) {
	mt := &metricsLog{}
	path := filepath.Join(t.TempDir(), "app.lock")
	opts := plock.Options{Metrics: mt}
	l, err := plock.Acquire(t.Context(), sqlite.OS(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plock.Acquire(t.Context(), sqlite.OS(), path, opts); !errors.Is(err, plock.ErrHeld) {
		t.Fatalf("a second Acquire: %v, want held", err)
	}
	// The holder never lets go: the waiter gives up when its context
	// ends, however long that takes.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	opts.Wait = true
	if _, err := plock.Acquire(ctx, sqlite.OS(), path, opts); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a waiting Acquire whose context ends: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	want := []string{"acquired true", "refused", "gave up true"}
	if got := mt.calls; !slices.Equal(got, want) {
		t.Fatalf("metrics heard %q, want %q", got, want)
	}
}
