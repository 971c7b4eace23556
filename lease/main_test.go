package lease_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		// A re-executed test binary: a child holds a fence or a lease
		// until killed or told to end, so the leak check belongs to the
		// parent only.
		if err := runChildMode(mode); err != nil {
			fmt.Fprintln(os.Stderr, "lease test child:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
