//go:build linux || darwin

package platform

import (
	"strconv"
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

func TestRealClockMonotonicIsClockMonotonic(t *testing.T) {
	c := RealClock()
	for range 1000 {
		before := clockMonotonic(t)
		got := c.Monotonic()
		after := clockMonotonic(t)
		if got < before || got > after {
			t.Fatalf("Monotonic() = %v, CLOCK_MONOTONIC read %v before and %v after", got, before, after)
		}
	}
}

// TestRealClockMonotonicAcrossProcesses: a child's reading lies between
// two of the parent's, so readings of different processes compare.
func TestRealClockMonotonicAcrossProcesses(t *testing.T) {
	before := RealClock().Monotonic()
	c := startChild(t, helperMonotonic)
	n, err := strconv.ParseInt(c.Line(t), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	after := RealClock().Monotonic()
	if got := time.Duration(n); got < before || got > after {
		t.Fatalf("child read %v, parent read %v before starting it and %v after", got, before, after)
	}
	finish(t, c)
}
