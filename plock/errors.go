package plock

import (
	"errors"
	"strconv"

	"github.com/rivus/collab/internal/errwrap"
	"github.com/rivus/collab/platform"
)

// ErrHeld is matched by every *HeldError, for callers who need to know
// that the lock is held and not by whom.
var ErrHeld = errors.New("plock: held")

// HeldError reports that the lock is held: by another process, or, in
// this process, by another task (or one attempting it) when the call did
// not wait. It matches ErrHeld.
//
// The lock is also busy while another process is part-way through taking
// it (SQLite's exclusive lock passes through shared and pending locks; a
// process paused there keeps them), so a call that does not wait may get
// a HeldError whose contender then fails, or gives up, and nobody holds
// the lock after all. A HeldError therefore says "held, or being taken";
// a caller that must not miss a free lock waits (Options.Wait).
type HeldError struct {
	Path string
	// Holder is the holder's identity, or nil when unknown (a SQLite
	// holder without a readable stamp, or whose stamp names another
	// process than the kernel does, or a lock a task of this process is
	// still making its first attempt at).
	Holder *platform.Identity
	// LockPID is the process the kernel names as holding a SQLite lock,
	// on this process table, or 0 where it cannot tell. Holder is nil
	// when the stamp names another process than this (stale, or planted).
	LockPID int
}

func (e *HeldError) Error() string {
	switch {
	case e.Holder == nil && e.LockPID != 0:
		return "plock: " + e.Path + " is held by pid " + strconv.Itoa(e.LockPID)
	case e.Holder == nil:
		return "plock: " + e.Path + " is held"
	}
	return "plock: " + e.Path + " is held by " + e.Holder.String()
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// StampError reports a lock file whose contents are not an identity. The
// file is left in place for a person to inspect.
type StampError struct {
	Path string
	Err  error
}

func (e *StampError) Error() string {
	return "plock: lock file " + e.Path + " holds no valid identity (left in place): " + errwrap.Text(e.Err)
}

func (e *StampError) Unwrap() error { return e.Err }

// ArgError reports an argument that Acquire, IsHeld or Inspect cannot
// take: a platform without the FS or Process it requires, a nil platform
// in a program that does not link platform/sqlite (nil means the SQLite
// mode), or an Options field such as a Policy of another family. It is
// returned before the call looks at its context or touches any file.
type ArgError struct {
	// Arg names the argument: "Platform", or the Options field ("Policy").
	Arg    string
	Reason string
}

func (e *ArgError) Error() string {
	return "plock: invalid argument: " + e.Arg + " " + e.Reason
}
