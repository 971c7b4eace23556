package platform

import "github.com/rivus/collab/platform/clock"

// Clock, Timer and Backoff are package clock's, so that a package that needs only
// time imports that package alone.
type (
	Clock   = clock.Clock
	Timer   = clock.Timer
	Backoff = clock.Backoff
)

// RealClock returns the clock of the running operating system.
func RealClock() Clock { return clock.Real() }
