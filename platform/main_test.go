package platform

import (
	"fmt"
	"io"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// helperEnv switches a re-executed test binary into a child process; its
// value names what the child does (see runHelper).
const helperEnv = "COLLAB_PLATFORM_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		// A child runs no tests: it does its one job and exits, before
		// the leak check, which belongs to the parent.
		if err := runHelper(mode, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// Child modes.
const (
	// helperIdentity prints the child's identity as one JSON line, then
	// blocks reading stdin until EOF, so the parent decides when it ends.
	helperIdentity = "identity"
	// helperMonotonic prints one RealClock().Monotonic() reading in
	// nanoseconds, and exits.
	helperMonotonic = "monotonic"
	// helperDeniedProbe drops root to an unprivileged user, then prints
	// what the real kernel says about pid 1 (see deniedProbeReport).
	helperDeniedProbe = "denied-probe"
)

// runHelper is the body of a child process.
func runHelper(mode string, stdin io.Reader, stdout io.Writer) error {
	switch mode {
	case helperIdentity:
		id, err := OSProcess().Self()
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", id.Marshal()); err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, stdin)
		return err
	case helperMonotonic:
		_, err := fmt.Fprintln(stdout, int64(RealClock().Monotonic()))
		return err
	case helperDeniedProbe:
		report, err := deniedProbeReport()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, report)
		return err
	}
	return fmt.Errorf("unknown mode %q", mode)
}
