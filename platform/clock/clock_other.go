//go:build !linux && !darwin

package clock

import "time"

// processStart anchors the monotonic reading where the host's monotonic
// clock is not read: readings compare within one process only.
var processStart = time.Now()

func monotonicNow() time.Duration { return time.Since(processStart) }
