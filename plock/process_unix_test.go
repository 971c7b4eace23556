//go:build linux || darwin

package plock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// backends are the lock's two modes as a child selects them.
var backends = []string{backendSQLite, backendFile}

// child is a running re-executed test binary.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	wait   func() error // waits once; later calls return the first result
}

// startChild starts the test binary as a child in mode on the lock at
// path. The child is continued, killed and reaped at the end of the test
// if it still runs.
func startChild(t *testing.T, mode, backend, path string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// A race-enabled child would otherwise sleep a second before exiting.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, backendEnv+"="+backend, pathEnv+"="+path, "GORACE="+gorace)
	cmd.Env = append(cmd.Env, env...)
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
	c := &child{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), wait: sync.OnceValue(cmd.Wait)}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Signal(syscall.SIGCONT) // a stopped child cannot die of SIGKILL's cleanup otherwise
		_ = cmd.Process.Kill()                  // fails harmlessly when already reaped
		_ = c.wait()
	})
	return c
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// expect reads the child's next output line and requires it to be want.
func (c *child) expect(t *testing.T, want string) {
	t.Helper()
	s, err := c.stdout.ReadString('\n')
	if err != nil {
		t.Fatalf("read from child %d: %v (child exited: %v)", c.pid(), err, c.wait())
	}
	if got := strings.TrimSuffix(s, "\n"); got != want {
		t.Fatalf("child %d said %q, want %q", c.pid(), got, want)
	}
}

// finish closes the child's stdin so that it releases the lock and exits.
func (c *child) finish(t *testing.T) {
	t.Helper()
	if err := c.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	c.expect(t, "released")
	if err := c.wait(); err != nil {
		t.Fatalf("child %d: %v", c.pid(), err)
	}
}

// signal sends sig to the child.
func (c *child) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v to child %d: %v", sig, c.pid(), err)
	}
}

// holdingChild starts a child that holds the lock at path.
func holdingChild(t *testing.T, backend, path string) *child {
	t.Helper()
	c := startChild(t, helperHold, backend, path)
	c.expect(t, "held")
	return c
}

// heldByPID requires a *HeldError naming pid.
func heldByPID(t *testing.T, backend, path string, pid int) {
	t.Helper()
	l, err := Acquire(context.Background(), childPlatform(backend), path, Options{})
	var held *HeldError
	if !errors.As(err, &held) {
		if l != nil {
			l.Release()
		}
		t.Fatalf("Acquire while child %d holds = %v, %v; want a HeldError", pid, l, err)
	}
	if held.Holder == nil || held.Holder.PID != pid {
		t.Fatalf("HeldError.Holder = %s, want pid %d", describe(held.Holder), pid)
	}
}

// acquireNow requires the lock without waiting, and releases it.
func acquireNow(t *testing.T, backend, path string) {
	t.Helper()
	l, err := Acquire(context.Background(), childPlatform(backend), path, Options{})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestProcessSecondGetsHeldWithHolderPID(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "daemon.lock")
			c := holdingChild(t, backend, path)
			heldByPID(t, backend, path, c.pid())
			second := startChild(t, helperHold, backend, path)
			second.expect(t, "busy")
			c.finish(t)
			acquireNow(t, backend, path)
		})
	}
}

func TestProcessSIGKILLFreesLock(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "daemon.lock")
			c := holdingChild(t, backend, path)
			heldByPID(t, backend, path, c.pid())
			c.signal(t, syscall.SIGKILL)
			var exit *exec.ExitError
			if err := c.wait(); !errors.As(err, &exit) {
				t.Fatalf("killed child: %v", err)
			}
			// SQLite: the kernel dropped the lock with the process. Lock
			// file: the dead holder's file is reclaimed by this attempt.
			if held, err := IsHeld(context.Background(), childPlatform(backend), path); err != nil || held {
				t.Errorf("IsHeld after the holder was killed = %v, %v; want false", held, err)
			}
			acquireNow(t, backend, path)
		})
	}
}

func TestProcessSIGSTOPHolderStillHolds(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "daemon.lock")
			c := holdingChild(t, backend, path)
			c.signal(t, syscall.SIGSTOP)
			heldByPID(t, backend, path, c.pid())
			if held, err := IsHeld(context.Background(), childPlatform(backend), path); err != nil || !held {
				t.Errorf("IsHeld while the holder is stopped = %v, %v; want true", held, err)
			}
			c.signal(t, syscall.SIGCONT)
			c.finish(t)
			acquireNow(t, backend, path)
		})
	}
}

// A contender in this process that goes through another SQLite value
// opens and closes the database while this process holds it; closing a
// descriptor of a file drops every POSIX lock the process has on it,
// unless SQLite keeps that descriptor open. Another process must still be
// kept out afterwards.
func TestProcessHolderKeptAcrossInProcessSQLiteValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.lock")
	l, err := Acquire(context.Background(), childPlatform(backendSQLite), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	other := *childPlatform(backendSQLite)
	other.SQLite = newCountingSQLite()
	if held, err := IsHeld(context.Background(), &other, path); err != nil || !held {
		t.Errorf("IsHeld through another SQLite value = %v, %v; want true", held, err)
	}
	if l2, err := Acquire(context.Background(), &other, path, Options{}); err == nil {
		l2.Release()
		t.Fatal("Acquire through another SQLite value took a held lock")
	}
	c := startChild(t, helperHold, backendSQLite, path)
	c.expect(t, "busy")
}

func TestProcessesNeverHoldTogether(t *testing.T) {
	const (
		procs  = 8
		rounds = 50
	)
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "daemon.lock")
			marker := filepath.Join(dir, "holder.marker")
			children := make([]*child, procs)
			for i := range children {
				children[i] = startChild(t, helperStress, backend, path,
					markerEnv+"="+marker, fmt.Sprintf("%s=%d", roundsEnv, rounds))
			}
			for _, c := range children { // start them together
				if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range children {
				err := c.wait()
				var exit *exec.ExitError
				switch {
				case errors.As(err, &exit) && exit.ExitCode() == exitViolation:
					t.Errorf("child %d held the lock together with another process", c.pid())
				case err != nil:
					t.Errorf("child %d: %v", c.pid(), err)
				}
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("marker left behind: %v", err)
			}
		})
	}
}
