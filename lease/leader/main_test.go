package leader_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if store := os.Getenv(candidateEnv); store != "" {
		// A re-executed test binary: a candidate campaigns until killed.
		if err := runCandidate(store); err != nil {
			fmt.Fprintln(os.Stderr, "candidate:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
