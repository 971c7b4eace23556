package linearizability

import (
	"testing"

	"go.uber.org/goleak"
)

// porcupine checks partitions in goroutines, and the lease run starts
// managers: none may outlive the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
