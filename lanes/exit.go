package lanes

import (
	"errors"
	"fmt"
)

// Exit is how an activation ended: Succeeded, Failed or Interrupted.
type Exit interface {
	isExit()
	String() string
}

// Succeeded: Activate returned nil.
type Succeeded struct{}

// Failed: Activate returned an error of its own, panicked, or called
// runtime.Goexit. Stack is set for a panic or Goexit.
type Failed struct {
	Err   error
	Stack []byte
}

// Interrupted: the lanes cut the activation short (Cancel, Close,
// TurnTimeout: Cause says which), or dropped an owed activation before it
// started, in which case Started is false and Activate was never called.
type Interrupted struct {
	Started bool
	Cause   error
}

func (Succeeded) isExit()   {}
func (Failed) isExit()      {}
func (Interrupted) isExit() {}

func (Succeeded) String() string { return "succeeded" }
func (f Failed) String() string  { return "failed: " + f.Err.Error() }
func (i Interrupted) String() string {
	if !i.Started {
		return fmt.Sprintf("interrupted before it started: %v", i.Cause)
	}
	return fmt.Sprintf("interrupted: %v", i.Cause)
}

// Errors of the lanes. Causes of interruption are also what
// context.Cause returns inside an interrupted activation.
var (
	// ErrQueueFull: the wake would need a queue place and MaxQueued lanes
	// already wait.
	ErrQueueFull = errors.New("lanes: queue full")
	// ErrClosed: the lanes are closed.
	ErrClosed = errors.New("lanes: closed")
	// ErrCancelled is the cause of an interruption by Cancel.
	ErrCancelled = errors.New("lanes: cancelled")
	// ErrTurnTimeout is the cause of an interruption by TurnTimeout.
	ErrTurnTimeout = errors.New("lanes: turn timeout")
	// ErrGoexit is the error of an activation that called runtime.Goexit.
	ErrGoexit = errors.New("lanes: activation called runtime.Goexit")
)

// PanicError is the error of an activation that panicked.
type PanicError struct {
	Value any
}

func (e *PanicError) Error() string { return fmt.Sprintf("lanes: activation panicked: %v", e.Value) }
