//go:build linux || darwin

package clock

import (
	"time"

	"golang.org/x/sys/unix"
)

func monotonicNow() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("clock: clock_gettime(CLOCK_MONOTONIC): " + err.Error()) // cannot fail on a supported kernel
	}
	return time.Duration(ts.Nano())
}
