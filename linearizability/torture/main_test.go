package torture

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the process as a worker when the controller started it
// as one; otherwise it runs the tests, none of which may leave a
// goroutine behind.
func TestMain(m *testing.M) {
	WorkerMain()
	goleak.VerifyTestMain(m)
}

// testCommand starts this test binary as a worker, running no tests.
func testCommand() []string { return []string{os.Args[0], "-test.run=^$"} }
