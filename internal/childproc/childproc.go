// Package childproc starts the running test binary again as a child
// process, for tests that need real processes: holders to kill with
// SIGKILL, pause with SIGSTOP, and talk to over pipes. A child of Start
// runs no tests (-test.run=^$); the test's TestMain recognises it by the
// environment it is given and does the child's work instead. A child of
// StartRun runs the tests its pattern selects, which recognise it by
// their environment, so that a package can hold children without a
// TestMain of its own.
package childproc

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// Child is a running child process.
type Child struct {
	Cmd    *exec.Cmd
	Stdin  io.WriteCloser
	stdout *bufio.Reader
	wait   func() error // waits once; later calls return the first result
}

// Start starts the test binary with env added to this process's
// environment, its stdin and stdout on pipes and its stderr on this
// process's. At the end of the test the child is continued (a stopped
// child cannot die), killed and reaped if it still runs.
func Start(t testing.TB, env ...string) *Child {
	t.Helper()
	return StartRun(t, "^$", env...)
}

// StartRun is Start for a child that runs the tests pattern selects, as
// -test.run does.
func StartRun(t testing.TB, pattern string, env ...string) *Child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+pattern)
	// A race-enabled child would otherwise sleep a second before exiting.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(append(os.Environ(), "GORACE="+gorace), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	c := &Child{Cmd: cmd, Stdin: stdin, stdout: bufio.NewReader(stdout), wait: sync.OnceValue(cmd.Wait)}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = resume(cmd.Process)
		_ = cmd.Process.Kill() // fails harmlessly once reaped
		_ = c.wait()
	})
	return c
}

// Pid returns the child's process id.
func (c *Child) Pid() int { return c.Cmd.Process.Pid }

// Line reads the child's next output line, failing the test if the child
// closed its stdout.
func (c *Child) Line(t testing.TB) string {
	t.Helper()
	s, err := c.stdout.ReadString('\n')
	if err != nil {
		t.Fatalf("read from child %d: %v (child exited: %v)", c.Pid(), err, c.wait())
	}
	return strings.TrimSuffix(s, "\n")
}

// Expect reads the child's next output line and requires it to be want.
func (c *Child) Expect(t testing.TB, want string) {
	t.Helper()
	if got := c.Line(t); got != want {
		t.Fatalf("child %d said %q, want %q", c.Pid(), got, want)
	}
}

// Stdout returns the reader of the child's output, for callers that read
// it their own way.
func (c *Child) Stdout() *bufio.Reader { return c.stdout }

// Wait waits for the child to exit; later calls return the first result.
func (c *Child) Wait() error { return c.wait() }

// Signal sends sig to the child, failing the test if it cannot.
func (c *Child) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := c.Cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v to child %d: %v", sig, c.Pid(), err)
	}
}
