package plock

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// helperEnv switches a re-executed test binary into a child process; its
// value names what the child does (see runHelper).
const helperEnv = "COLLAB_PLOCK_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		// A child runs no tests: it does its one job and exits, before the
		// leak check, which belongs to the parent.
		os.Exit(runHelper(mode))
	}
	code := m.Run()
	if code == 0 {
		// Every test ends its tasks, so the registry must be empty again:
		// a leftover queue is a leak that grows with every lock taken.
		if n := registrySize(); n != 0 {
			fmt.Fprintf(os.Stderr, "plock: %d turn queues left in the registry after the tests\n", n)
			code = 1
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// registrySize is the number of locks the registry keeps a queue for.
func registrySize() int {
	turns.mu.Lock()
	defer turns.mu.Unlock()
	return len(turns.queues)
}
