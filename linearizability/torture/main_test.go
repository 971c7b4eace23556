package torture

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the process as a worker when the controller started it
// as one; otherwise it runs the tests, none of which may leave a
// goroutine behind.
func TestMain(m *testing.M) {
	failIfTold()
	WorkerMain()
	goleak.VerifyTestMain(m)
}

// testCommand starts this test binary as a worker, running no tests.
func testCommand() []string { return []string{os.Args[0], "-test.run=^$"} }

// failingCommand is testCommand whose worker of process number p ends
// at once, on its own, with status 3 and failMessage in its log; the
// other workers work.
func failingCommand(p int) []string { return append(testCommand(), failArg(p)) }

func failArg(p int) string { return fmt.Sprintf("torture-test-fail-process=%d", p) }

const failMessage = "failing at once, as the test asked"

// failIfTold ends this process as failingCommand says, if it is a
// worker told to fail.
func failIfTold() {
	v, ok := os.LookupEnv(EnvWorker)
	if !ok {
		return
	}
	var a assignment
	if json.Unmarshal([]byte(v), &a) != nil || !slices.Contains(os.Args[1:], failArg(a.Process)) {
		return // WorkerMain judges the assignment
	}
	fmt.Fprintf(os.Stderr, "torture worker p%d: %s\n", a.Process, failMessage)
	os.Exit(3)
}
