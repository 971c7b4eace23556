package lanes

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
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
		c := testContext(context.Background())
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

// TestActivationContextMadeOnlyWhenAsked: Err, Deadline, context.Cause
// and values, of keys New's ctx has or lacks, need no cancellable context
// while the activation runs, and New's cancellation and deadline do not
// show; Done makes one.
func TestActivationContextMadeOnlyWhenAsked(t *testing.T) {
	parent, cancelParent := context.WithTimeout(context.WithValue(context.Background(), valueKey{}, "v"), time.Hour)
	defer cancelParent()
	c := newActivationContext(&parent)
	if v := c.Value(valueKey{}); v != "v" {
		t.Errorf("Value = %v, want New's value", v)
	}
	if v := c.Value(struct{ other int }{}); v != nil {
		t.Errorf("Value of a missing key = %v, want nil", v)
	}
	if _, ok := c.Deadline(); ok {
		t.Error("Deadline set; New's deadline must not show")
	}
	cancelParent()
	if err := c.Err(); err != nil {
		t.Errorf("Err = %v after New's ctx ended; its cancellation must not show", err)
	}
	if cause := context.Cause(c); cause != nil {
		t.Errorf("Cause before cancel = %v, want nil", cause)
	}
	if c.isMade() {
		t.Fatal("a cancellable context was made for Err, Deadline, Cause and values")
	}
	if isClosed(c.Done()) {
		t.Error("Done closed before cancel")
	}
	if !c.isMade() {
		t.Fatal("Done made no cancellable context")
	}
}

// TestActivationContextAllocations: the context is one allocation, and
// values, Err and cancel add none; Done adds the standard library's own
// (a cancel context, its cancel function, its channel) and the pair of
// them that the context keeps (innerContext).
func TestActivationContextAllocations(t *testing.T) {
	parent := context.WithValue(context.Background(), valueKey{}, "v")
	var sink any
	quiet := testing.AllocsPerRun(100, func() {
		c := newActivationContext(&parent)
		sink = c.Value(valueKey{})
		sink = c.Value(struct{ other int }{})
		sink = c.Err()
		c.cancel(context.Canceled)
	})
	if quiet != 1 {
		t.Errorf("an activation reading values and Err: %v allocations, want 1", quiet)
	}
	withDone := testing.AllocsPerRun(100, func() {
		c := newActivationContext(&parent)
		sink = c.Done()
		c.cancel(context.Canceled)
	})
	if withDone > 5 {
		t.Errorf("an activation taking Done: %v allocations, want at most 5", withDone)
	}
	_ = sink
}

// TestActivationContextNilCause: a nil cause means context.Canceled, as
// for a context.CancelCauseFunc, to the lanes and to context.Cause alike.
func TestActivationContextNilCause(t *testing.T) {
	c := testContext(context.Background())
	c.cancel(nil)
	if c.cancelCause() != context.Canceled || context.Cause(c) != context.Canceled {
		t.Errorf("cancelCause %v, Cause %v; want context.Canceled for both", c.cancelCause(), context.Cause(c))
	}
}

// plainContext is a context that does not name itself.
type plainContext struct{ context.Context }

// TestActivationContextName: printed, the context reads as New's ctx
// without its cancellation, made cancellable, as it did when it was one,
// whether New's ctx names itself or not.
func TestActivationContextName(t *testing.T) {
	for _, parent := range []context.Context{
		context.WithValue(context.Background(), valueKey{}, "v"),
		plainContext{context.Background()},
	} {
		std, cancel := context.WithCancel(context.WithoutCancel(parent))
		want := fmt.Sprint(std)
		cancel()
		if got := fmt.Sprint(newActivationContext(&parent)); got != want {
			t.Errorf("printed %q, want %q", got, want)
		}
	}
}

// TestActivationContextDerivedAfterCancel: contexts derived after the
// cancel, with or without a cancellable context made before, are done at
// once with the first cause, and an AfterFunc runs.
func TestActivationContextDerivedAfterCancel(t *testing.T) {
	for _, madeFirst := range []bool{false, true} {
		c := testContext(context.Background())
		if madeFirst {
			c.Done()
		}
		c.cancel(ErrTurnTimeout)
		c.cancel(context.Canceled)
		withCancel, stop := context.WithCancel(c)
		defer stop()
		withTimeout, stopTimeout := context.WithTimeout(context.WithValue(c, valueKey{}, 1), time.Hour)
		defer stopTimeout()
		for name, d := range map[string]context.Context{"WithCancel": withCancel, "WithValue.WithTimeout": withTimeout} {
			if !isClosed(d.Done()) || d.Err() != context.Canceled || context.Cause(d) != ErrTurnTimeout {
				t.Errorf("made first %v, %s: Done closed %v, Err %v, Cause %v; want closed, Canceled, %v",
					madeFirst, name, isClosed(d.Done()), d.Err(), context.Cause(d), ErrTurnTimeout)
			}
		}
		ran := make(chan struct{})
		context.AfterFunc(c, func() { close(ran) })
		<-ran
	}
}

// TestActivationContextErrOnlyOnceDone: under concurrent cancel, Err never
// says Canceled while Done is still open, and every reader agrees on the
// cause.
func TestActivationContextErrOnlyOnceDone(t *testing.T) {
	for range 200 {
		c := testContext(context.Background())
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
	if c.isMade() {
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

// testContext makes an activation context with values' values, as the
// lanes make one with New's ctx's.
func testContext(values context.Context) *activationContext {
	return newActivationContext(&values)
}
