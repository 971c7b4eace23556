package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gone waits, up to a minute, until process pid has ended (a zombie that
// nobody reaps counts as ended), and reports whether it did.
func gone(pid int) bool {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			return true
		}
		time.Sleep(10 * time.Millisecond) // polls the process table: no event tells of another process's end
	}
	return false
}

// readPIDs reads the command's first line: the pids it prints.
func readPIDs(t *testing.T, r io.Reader) []int {
	t.Helper()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("the command printed %q: %v", line, err)
	}
	var pids []int
	for _, f := range strings.Fields(line) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("the command printed %q", line)
		}
		pids = append(pids, pid)
	}
	return pids
}

// TestLossEndsTheCommandsBackgroundJobs: on loss, the command's whole
// process group is stopped, not only the shell collab started.
func TestLossEndsTheCommandsBackgroundJobs(t *testing.T) {
	store := filepath.Join(t.TempDir(), "leases.db")
	stdoutR, done, errb := shortLease(store, "sleep 60 & echo $$ $!; wait")
	pids := readPIDs(t, stdoutR)
	go io.Copy(io.Discard, stdoutR)
	steal(t, store, "k")
	if code := <-done; code != exitLeaseLost {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitLeaseLost, errb.String())
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("process %d of the command still runs after the loss", pid)
		}
	}
}

// TestCommandsBackgroundJobsEndWithIt: what the command leaves running
// when it exits would run without the lock: it is stopped too. (The job
// lets go of the command's output, so that collab sees the command end at
// once; one that keeps it open is stopped after WaitDelay.)
func TestCommandsBackgroundJobsEndWithIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.lock")
	code, out, errOut := runCLI(t, "", "lock", path, "--", "sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	pids := readPIDs(t, strings.NewReader(out))
	if !gone(pids[0]) {
		t.Errorf("the command's background job %d still runs after collab returned", pids[0])
	}
}

// TestCommandDiesWithCollab: SIGKILL of collab kills the command it runs
// (the kernel's parent-death signal), which would otherwise run on
// without the lock.
func TestCommandDiesWithCollab(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.lock")
	cmd := exec.Command(os.Args[0], "lock", path, "--", "sh", "-c", "echo $$; exec sleep 60")
	cmd.Env = append(os.Environ(), asCollabEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids := readPIDs(t, stdout)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("collab ended with %v, want killed", err)
	}
	if !gone(pids[0]) {
		t.Errorf("the command %d still runs after collab was killed", pids[0])
	}
}
