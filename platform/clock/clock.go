// Package clock is the time of the runtime packages: wall time, a
// monotonic reading that processes of one boot can compare, and timers,
// behind an interface that tests replace (platformtest.Clock); and the
// pace of a poll for a lock that another process holds (Backoff). It is apart
// from package platform so that a package that needs only time (lanes)
// links nothing else of the operating system's edge.
package clock

import "time"

// Clock gives wall time, a monotonic reading and timers. Runtime packages
// take time only from a Clock, so that tests can move it by hand
// (platformtest.Clock).
type Clock interface {
	// Now returns the wall-clock time, for records and people. It may
	// jump; never measure a duration with it.
	Now() time.Time
	// Monotonic returns a reading of the host's monotonic clock
	// (CLOCK_MONOTONIC on linux and darwin): it never goes back, and
	// readings taken by different processes of one boot compare.
	Monotonic() time.Duration
	// NewTimer returns a timer whose channel receives once, d from now.
	NewTimer(d time.Duration) Timer
	// AfterFunc calls f in its own goroutine d from now, unless stopped.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a one-shot timer of a Clock, like time.Timer.
type Timer interface {
	// C is the channel that receives the time; nil for AfterFunc timers.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
	// Reset makes the timer fire d from now; it reports whether it had
	// been active.
	Reset(d time.Duration) bool
}

type realClock struct{}

// Real returns the clock of the running operating system.
func Real() Clock { return realClock{} }

func (realClock) Now() time.Time           { return time.Now() }
func (realClock) Monotonic() time.Duration { return monotonicNow() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{time.AfterFunc(d, f)}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }
