package lanes

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
)

type valueKey struct{}

// isClosed reports whether done is closed, without waiting.
func isClosed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// TestActivationContextCancelled: cancelled before or after its
// cancellable context is made, an activation's context is done, says
// context.Canceled, and gives context.Cause the first cause, which also
// reaches a context derived from it and an AfterFunc.
func TestActivationContextCancelled(t *testing.T) {
	for _, madeFirst := range []bool{false, true} {
		c := newActivationContext(context.Background())
		if madeFirst {
			c.Done()
		}
		if err := c.Err(); err != nil {
			t.Fatalf("made first %v: Err before cancel = %v", madeFirst, err)
		}
		child, stop := context.WithCancel(c)
		defer stop()
		afterFunc := make(chan struct{})
		context.AfterFunc(c, func() { close(afterFunc) })

		c.cancel(ErrTurnTimeout)
		c.cancel(context.Canceled) // the end of the activation: the first cause stands

		if !isClosed(c.Done()) || c.Err() != context.Canceled {
			t.Errorf("made first %v: Done closed %v, Err %v; want closed, context.Canceled", madeFirst, isClosed(c.Done()), c.Err())
		}
		if cause := context.Cause(c); cause != ErrTurnTimeout {
			t.Errorf("made first %v: Cause = %v, want %v", madeFirst, cause, ErrTurnTimeout)
		}
		if c.cancelCause() != ErrTurnTimeout {
			t.Errorf("made first %v: cancelCause = %v, want %v", madeFirst, c.cancelCause(), ErrTurnTimeout)
		}
		<-child.Done()
		if cause := context.Cause(child); cause != ErrTurnTimeout {
			t.Errorf("made first %v: derived context's Cause = %v, want %v", madeFirst, cause, ErrTurnTimeout)
		}
		<-afterFunc
	}
}

// TestActivationContextMadeOnlyWhenAsked: Err, Deadline and the lanes'
// own values need no cancellable context; Done and a value the lanes lack
// make one, which holds that value's answer (nil).
func TestActivationContextMadeOnlyWhenAsked(t *testing.T) {
	c := newActivationContext(context.WithValue(context.Background(), valueKey{}, "v"))
	if v := c.Value(valueKey{}); v != "v" {
		t.Errorf("Value = %v, want the lanes' value", v)
	}
	_ = c.Err()
	if _, ok := c.Deadline(); ok {
		t.Error("Deadline set; the lanes' context has none")
	}
	if c.inner.Load() != nil {
		t.Fatal("a cancellable context was made for Err, Deadline and a value the lanes hold")
	}
	if v := c.Value(struct{ other int }{}); v != nil {
		t.Errorf("Value of a missing key = %v, want nil", v)
	}
	if c.inner.Load() == nil {
		t.Fatal("no cancellable context after a lookup of a key the lanes lack")
	}
	if isClosed(c.Done()) {
		t.Error("Done closed before cancel")
	}
}

// TestActivationContextErrOnlyOnceDone: under concurrent cancel, Err never
// says Canceled while Done is still open, and every reader agrees on the
// cause.
func TestActivationContextErrOnlyOnceDone(t *testing.T) {
	for range 200 {
		c := newActivationContext(context.Background())
		var wg sync.WaitGroup
		start := make(chan struct{})
		for r := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if r%2 == 0 {
					c.Done() // make the cancellable context while cancel runs
				}
				for c.Err() == nil {
					runtime.Gosched()
				}
				if !isClosed(c.Done()) {
					t.Error("Err is Canceled while Done is open")
				}
				if cause := context.Cause(c); cause != ErrCancelled {
					t.Errorf("Cause = %v, want %v", cause, ErrCancelled)
				}
			}()
		}
		close(start)
		c.cancel(ErrCancelled)
		wg.Wait()
	}
}

// TestActivationContextOutlivesItsActivation: an activation that never
// looks at its context ends without a cancellable one, and a context kept
// after its activation returned is done, with context.Canceled as its
// cause, while the lane runs its next activation with a context of its
// own.
func TestActivationContextOutlivesItsActivation(t *testing.T) {
	kept := make(chan context.Context, 2)
	exits := make(chan Exit, 2)
	l := newLanes(t, Config[string]{
		Activate: func(ctx context.Context, _ string) error {
			kept <- ctx
			return nil
		},
		OnExit: func(_ string, e Exit) { exits <- e },
	})
	if _, err := l.Wake("k"); err != nil {
		t.Fatal(err)
	}
	first := recv(t, kept, "first activation")
	recv(t, exits, "first OnExit")
	c, ok := first.(*activationContext)
	if !ok {
		t.Fatalf("activation context is %T", first)
	}
	if c.inner.Load() != nil {
		t.Error("an activation that never looked at its context made a cancellable one")
	}
	if !isClosed(first.Done()) || first.Err() != context.Canceled || !errors.Is(context.Cause(first), context.Canceled) {
		t.Errorf("kept context: Done closed %v, Err %v, Cause %v; want closed, Canceled, Canceled",
			isClosed(first.Done()), first.Err(), context.Cause(first))
	}
	if _, err := l.Wake("k"); err != nil {
		t.Fatal(err)
	}
	second := recv(t, kept, "second activation")
	recv(t, exits, "second OnExit")
	if second == first {
		t.Error("the next activation of the lane shares its context with the last")
	}
}
