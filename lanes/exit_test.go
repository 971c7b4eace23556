package lanes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

var errOwn = errors.New("own failure")

// panicker and goexiter are named so that their frames can be found in
// the stack a Failed exit carries.
func panicker(context.Context, string) error { panic("kaboom") }

func goexiter(context.Context, string) error {
	runtime.Goexit()
	return nil
}

// OnExit hears how each activation ended: on its own (nil, an error, a
// panic, runtime.Goexit) or after an interruption by Cancel.
func TestExit(t *testing.T) {
	tests := []struct {
		name      string
		activate  func(context.Context, string) error
		interrupt bool   // Cancel the activation once it runs
		want      Exit   // compared with ==, unless wantErr is set
		wantErr   error  // Failed with this error (errors.Is)
		stackHas  string // a frame the Failed exit's stack must hold
	}{
		{name: "nil", activate: func(context.Context, string) error { return nil }, want: Succeeded{}},
		{name: "error", activate: func(context.Context, string) error { return errOwn }, wantErr: errOwn},
		{name: "context error without interruption",
			activate: func(context.Context, string) error { return context.Canceled }, wantErr: context.Canceled},
		{name: "panic", activate: panicker, wantErr: &PanicError{}, stackHas: "lanes.panicker"},
		{name: "Goexit", activate: goexiter, wantErr: ErrGoexit, stackHas: "lanes.goexiter"},
		{name: "interrupted, returns ctx.Err", interrupt: true,
			activate: func(ctx context.Context, _ string) error { <-ctx.Done(); return ctx.Err() },
			want:     Interrupted{Started: true, Cause: ErrCancelled}},
		{name: "interrupted, returns the cause wrapped", interrupt: true,
			activate: func(ctx context.Context, _ string) error {
				<-ctx.Done()
				return fmt.Errorf("stopping: %w", context.Cause(ctx))
			},
			want: Interrupted{Started: true, Cause: ErrCancelled}},
		{name: "interrupted, returns nil", interrupt: true,
			activate: func(ctx context.Context, _ string) error { <-ctx.Done(); return nil },
			want:     Succeeded{}},
		{name: "interrupted, returns its own error", interrupt: true,
			activate: func(ctx context.Context, _ string) error { <-ctx.Done(); return errOwn },
			wantErr:  errOwn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exits := make(chan Exit, 2)
			running := make(chan struct{}, 2)
			l := newLanes(t, Config[string]{
				Activate: func(ctx context.Context, key string) error {
					running <- struct{}{}
					return tt.activate(ctx, key)
				},
				OnExit: func(_ string, e Exit) { exits <- e },
			})
			wakeWant(t, l, "a", Started)
			recv(t, running, "the activation")
			if tt.interrupt {
				if err := l.Cancel(context.Background(), "a"); err != nil {
					t.Fatalf("Cancel: %v", err)
				}
			}
			got := recv(t, exits, "OnExit")
			if tt.wantErr == nil {
				if got != tt.want {
					t.Fatalf("exit = %#v, want %#v", got, tt.want)
				}
				return
			}
			f, ok := got.(Failed)
			if !ok {
				t.Fatalf("exit = %#v, want Failed", got)
			}
			var pe *PanicError
			switch {
			case errors.As(tt.wantErr, &pe):
				if !errors.As(f.Err, &pe) || pe.Value != "kaboom" {
					t.Errorf("Err = %v, want a *PanicError with value kaboom", f.Err)
				}
			case !errors.Is(f.Err, tt.wantErr):
				t.Errorf("Err = %v, want %v", f.Err, tt.wantErr)
			}
			if tt.stackHas != "" && !bytes.Contains(f.Stack, []byte(tt.stackHas)) {
				t.Errorf("stack does not show %s:\n%s", tt.stackHas, f.Stack)
			}
			if tt.stackHas == "" && f.Stack != nil {
				t.Errorf("an error of the activation's own carries a stack")
			}
			// The lanes go on: the key runs again (Queued if its lane
			// has not yet stepped past the activation that ended).
			if _, err := l.Wake("a"); err != nil {
				t.Fatalf("Wake after the exit: %v", err)
			}
			recv(t, running, "the next activation")
			if tt.interrupt {
				l.Cancel(context.Background(), "a")
			}
			recv(t, exits, "OnExit of the next activation")
		})
	}
}

// lockedBuffer is a log destination safe for the activations' goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// firstWaits returns an Activate whose first call returns only once
// release is closed, so that the first key keeps the only slot until the
// test has woken the next one; every later call returns at once.
func firstWaits() (activate func(context.Context, string) error, release chan struct{}) {
	var calls atomic.Int32
	release = make(chan struct{})
	return func(context.Context, string) error {
		if calls.Add(1) == 1 {
			<-release
		}
		return nil
	}, release
}

// A panic in OnExit is logged as a warning and the lanes go on: the slot
// passes on and the key runs again.
func TestOnExitPanic(t *testing.T) {
	var log lockedBuffer
	var calls atomic.Int32
	heard := make(chan string, 4)
	activate, bWoken := firstWaits()
	l := newLanes(t, Config[string]{
		Activate: activate,
		OnExit: func(key string, _ Exit) {
			if calls.Add(1) == 1 {
				panic("onexit-bug")
			}
			heard <- key
		},
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
	})
	wakeWant(t, l, "a", Started)
	wakeWant(t, l, "b", Queued) // runs only once a's slot passes on
	close(bWoken)
	if k := recv(t, heard, "OnExit after the panic"); k != "b" {
		t.Errorf("OnExit heard %s, want b", k)
	}
	// b ran, so a's lane stepped past its activation: a runs afresh
	// (Queued if b's lane has not yet stepped past b's activation).
	if _, err := l.Wake("a"); err != nil {
		t.Fatalf("Wake(a): %v", err)
	}
	if k := recv(t, heard, "OnExit of a's next activation"); k != "a" {
		t.Errorf("OnExit heard %s, want a", k)
	}
	l.Close()
	out := log.String()
	for _, want := range []string{"level=WARN", "OnExit panicked", "onexit-bug", "key=a"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// A runtime.Goexit in OnExit (t.FailNow in a test's OnExit, say) is a
// defect like a panic: it is logged and the lanes go on, so the slot
// passes on and the key can run again.
func TestOnExitGoexit(t *testing.T) {
	var log lockedBuffer
	var calls atomic.Int32
	heard := make(chan string, 4)
	activate, bWoken := firstWaits()
	l := newLanes(t, Config[string]{
		Activate: activate,
		OnExit: func(key string, _ Exit) {
			if calls.Add(1) == 1 {
				runtime.Goexit()
			}
			heard <- key
		},
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
	})
	wakeWant(t, l, "a", Started)
	wakeWant(t, l, "b", Queued)
	close(bWoken)
	if k := recv(t, heard, "b's OnExit: the slot passing on after a's OnExit called Goexit"); k != "b" {
		t.Errorf("OnExit heard %s, want b", k)
	}
	if _, err := l.Wake("a"); err != nil {
		t.Fatalf("Wake(a): %v", err)
	}
	if k := recv(t, heard, "OnExit of a's next activation"); k != "a" {
		t.Errorf("OnExit heard %s, want a", k)
	}
	l.Close()
	if out := log.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "key=a") {
		t.Errorf("no warning logged for the Goexit in OnExit:\n%s", out)
	}
}

// TestGoexitInADroppedWakesReport: an OnExit that ends Close's goroutine
// (runtime.Goexit, as t.FailNow would) while Close reports the dropped
// wakes loses none of the others: they are reported on a goroutine of
// their own, which a later Close waits for.
func TestGoexitInADroppedWakesReport(t *testing.T) {
	heard := make(chan string, 8)
	l := newLanes(t, Config[string]{
		MaxConcurrent: 1,
		Activate: func(ctx context.Context, key string) error {
			<-ctx.Done()
			return ctx.Err()
		},
		OnExit: func(key string, e Exit) {
			if i, ok := e.(Interrupted); ok && !i.Started && key == "x" {
				runtime.Goexit()
			}
			heard <- key
		},
	})
	wakeWant(t, l, "a", Started)
	wakeWant(t, l, "x", Queued)
	wakeWant(t, l, "y", Queued)
	closeEnded := make(chan struct{})
	go func() {
		defer close(closeEnded) // on return, or on Goexit
		l.Close()
	}()
	<-closeEnded
	l.Close() // returns once every activation and report has ended
	got := map[string]bool{}
	for len(heard) > 0 {
		got[<-heard] = true
	}
	if !got["a"] || !got["y"] || got["x"] {
		t.Errorf("OnExit heard %v, want a's interrupted activation and y's dropped wake", got)
	}
}
