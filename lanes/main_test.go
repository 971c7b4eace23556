package lanes

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test closes its lanes; a goroutine left behind is a leak of the
// package (an activation, its timer, or a ctx watch).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
