//go:build linux || darwin

package clock

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func clockMonotonic(t *testing.T) time.Duration {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

func TestRealMonotonicIsClockMonotonic(t *testing.T) {
	c := Real()
	for range 1000 {
		before := clockMonotonic(t)
		got := c.Monotonic()
		after := clockMonotonic(t)
		if got < before || got > after {
			t.Fatalf("Monotonic() = %v, CLOCK_MONOTONIC read %v before and %v after", got, before, after)
		}
	}
}
