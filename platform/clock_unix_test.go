//go:build linux || darwin

package platform

import (
	"strconv"
	"testing"
	"time"
)

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
