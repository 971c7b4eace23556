package platform

import "github.com/rivus/collab/internal/errwrap"

// Process identifies the running process and judges others.
type Process interface {
	// Self returns the identity of the running process. It fails where
	// the identity cannot be read (windows, a sandbox that denies /proc or
	// sysctl); callers must handle that, and the error says why.
	Self() (Identity, error)
	// Judge tells whether the process holder names is alive, dead (only on
	// proof), unknown, or in another process table. It never fails: what
	// it cannot find out is Unknown.
	Judge(holder Identity) Verdict
}

// SelfError reports that the running process's identity could not be read.
type SelfError struct {
	What string // what could not be read, such as "/proc/self/stat"
	Err  error
}

func (e *SelfError) Error() string {
	return "platform: read own process identity: " + e.What + ": " + errwrap.Text(e.Err)
}

func (e *SelfError) Unwrap() error { return e.Err }
