package main

import (
	"bufio"
	"errors"
	"github.com/rivus/collab/internal/command"
	"github.com/rivus/collab/platform/platformtest"
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
	cmd, pids := startCollab(t, "lock", path, "--", "sh", "-c", "echo $$; exec sleep 60")
	killCollab(t, cmd)
	if !gone(pids[0]) {
		t.Errorf("the command %d still runs after collab was killed", pids[0])
	}
}

// startCollab starts this test binary as collab with args, and returns it
// with the pids the command prints on its first line.
func startCollab(t *testing.T, args ...string) (*exec.Cmd, []int) {
	t.Helper()
	return startCollabCmd(t, exec.Command(os.Args[0], args...))
}

// startCollabCmd is startCollab of a command made by exec.Command of this
// test binary, with its arguments.
func startCollabCmd(t *testing.T, cmd *exec.Cmd) (*exec.Cmd, []int) {
	t.Helper()
	cmd.Env = append(os.Environ(), asCollabEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, readPIDs(t, stdout)
}

// killCollab kills collab with SIGKILL and reaps it.
func killCollab(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("collab ended with %v, want killed", err)
	}
}

// TestKilledCollabsJobsKeepTheLock: SIGKILL frees collab's own lock at
// once, and reaches only the command itself (its parent-death signal), not
// the command's background jobs. They hold the lock's guard, so the next
// `collab lock` waits until they are gone: its command finds none of the
// first command's processes.
func TestKilledCollabsJobsKeepTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.lock")
	first, pids := startCollab(t, "lock", path, "--", "sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $$ $!; wait")
	killCollab(t, first)

	code, _, errOut := runCLI(t, "", "lock", path, "--", "true")
	if code != command.ExitHeld || !strings.Contains(errOut, command.GuardSuffix) {
		t.Fatalf("collab lock while the killed holder's job runs: exit %d, stderr %q; want %d naming the guard", code, errOut, command.ExitHeld)
	}
	code, out, errOut := runCLI(t, "", "lock", "status", path)
	if code != 0 || !strings.Contains(out, command.GuardSuffix) || !strings.Contains(out, "taken by pid "+strconv.Itoa(first.Process.Pid)) {
		t.Fatalf("collab lock status: exit %d, stdout %q, stderr %q; want held by the guard, which the killed collab %d took", code, out, errOut, first.Process.Pid)
	}

	// The waiter's command looks for the first command's processes (a
	// zombie nobody reaps counts as gone).
	script := "for p in " + strconv.Itoa(pids[0]) + " " + strconv.Itoa(pids[1]) + `; do
		s=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null)
		if [ -n "$s" ] && [ "$s" != Z ]; then echo "$p runs"; exit 1; fi
	done; echo gone`
	waiter := exec.Command(os.Args[0], "lock", "--wait", "--timeout", "1m", path, "--", "sh", "-c", script)
	waiter.Env = append(os.Environ(), asCollabEnv+"=1")
	done := make(chan []byte, 1)
	go func() { out, _ := waiter.CombinedOutput(); done <- out }()
	if err := syscall.Kill(pids[1], syscall.SIGKILL); err != nil { // the job started by this test's own collab
		t.Fatal(err)
	}
	if out := <-done; string(out) != "gone\n" || waiter.ProcessState.ExitCode() != 0 {
		t.Fatalf("the waiter got the lock with %q (exit %d); want it after the first command's processes ended", out, waiter.ProcessState.ExitCode())
	}
}

// TestLockFDIsTheGuard: the command finds the guard at $COLLAB_LOCK_FD; a
// job that closes it does not hold the lock once the command has ended.
func TestLockFDIsTheGuard(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.lock")
	code, out, errOut := runCLI(t, "", "lock", path, "--", "sh", "-c", `echo "$`+command.GuardEnv+`"; readlink /proc/self/fd/$`+command.GuardEnv)
	if code != 0 || out != "3\n"+path+command.GuardSuffix+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want descriptor 3 open on the guard", code, out, errOut)
	}
}

// TestKilledLeaseRunsCommandDies: SIGKILL of `collab lease run` kills its
// command; a background job of the command, which no parent-death signal
// reaches, runs on with the old token, which the successor's outranks, so
// that a fenced resource refuses it (README, Security on a shared machine).
func TestKilledLeaseRunsCommandDies(t *testing.T) {
	store := filepath.Join(t.TempDir(), "leases.db")
	first, out := startCollab(t, "lease", "run", "--store", store, "--key", "k", "--",
		"sh", "-c", `sleep 60 >/dev/null 2>&1 & echo $$ $! $COLLAB_LEASE_TOKEN; wait`)
	shell, job, token := out[0], out[1], out[2]
	defer syscall.Kill(job, syscall.SIGKILL) // the job started by this test's own collab
	killCollab(t, first)
	if !gone(shell) {
		t.Errorf("the command %d still runs after collab was killed", shell)
	}
	code, next, errOut := runCLI(t, "", "lease", "run", "--store", store, "--key", "k", "--", "sh", "-c", "echo $COLLAB_LEASE_TOKEN")
	if code != 0 {
		t.Fatalf("the successor: exit %d, stderr %q", code, errOut)
	}
	if n, err := strconv.Atoi(strings.TrimSpace(next)); err != nil || n <= token {
		t.Fatalf("the successor's token %q, want one above the killed holder's %d", next, token)
	}
}

// TestReadOnlyDirectorySaysPermissionDenied: a lock or store in a
// directory the user cannot write names the path and the cause. Root may
// write anywhere: as root, collab runs as nobody; CI runs as root.
func TestReadOnlyDirectorySaysPermissionDenied(t *testing.T) {
	dir := platformtest.ModeDir(t, 0o555)
	run := func(args ...string) string {
		_, _, errOut := runCLI(t, "", args...)
		return errOut
	}
	if os.Geteuid() == 0 {
		asNobody := collabAsNobody(t)
		run = func(args ...string) string {
			out, _ := asNobody(dir, args...)
			return out
		}
	}
	for _, args := range [][]string{
		{"lock", filepath.Join(dir, "app.lock"), "--", "true"},
		{"lease", "run", "--store", filepath.Join(dir, "leases.db"), "--key", "k", "--", "true"},
	} {
		if out := run(args...); !strings.Contains(out, dir) || !strings.Contains(out, "permission denied") {
			t.Errorf("collab %q: %q, want the path and permission denied", args, out)
		}
	}
}

// TestNestedLockKeepsTheOuterGuard: under `collab lock outer -- collab
// lock inner -- COMMAND`, the command holds both guards: the inner at
// $COLLAB_LOCK_FD, the outer after it ($COLLAB_LOCK_OUTER_FDS). So when
// the outer collab is killed, which kills the inner one and the command
// itself, the command's background job keeps the outer lock held: no
// second holder of it runs beside the job.
func TestNestedLockKeepsTheOuterGuard(t *testing.T) {
	dir := t.TempDir()
	outer, inner := filepath.Join(dir, "outer.lock"), filepath.Join(dir, "inner.lock")
	t.Setenv(asCollabEnv, "1") // the inner collab is this test binary too
	show := `echo "$` + command.GuardEnv + ` $` + command.OuterGuardsEnv + `"; readlink /proc/self/fd/3 /proc/self/fd/4`
	code, out, errOut := runCLI(t, "", "lock", outer, "--", os.Args[0], "lock", inner, "--", "sh", "-c", show)
	if want := "3 4\n" + inner + command.GuardSuffix + "\n" + outer + command.GuardSuffix + "\n"; code != 0 || out != want {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
	}

	first, pids := startCollab(t, "lock", outer, "--", os.Args[0], "lock", inner, "--", "sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $$ $!; wait")
	killCollab(t, first)
	code, _, errOut = runCLI(t, "", "lock", outer, "--", "true")
	if code != command.ExitHeld || !strings.Contains(errOut, command.GuardSuffix) {
		t.Fatalf("collab lock of the outer lock while the job runs: exit %d, stderr %q; want %d naming the guard", code, errOut, command.ExitHeld)
	}
	if err := syscall.Kill(pids[1], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// collabAsNobody returns a runner of this test binary as collab, run as
// nobody in a directory: a copy of it that nobody may run. Only root can
// use it.
func collabAsNobody(t *testing.T) func(dir string, args ...string) (string, int) {
	t.Helper()
	binDir := platformtest.ModeDir(t, 0o755)
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(binDir, "collab")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return func(dir string, args ...string) (string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), asCollabEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
}

// TestOtherUserReadsADaemonsLockStatus: a root daemon's SQLite lock in a
// root-owned directory others may read (0755) is private (0600), so an
// unprivileged user cannot open it; collab lock status, run as nobody,
// still says it is held and by which pid (the kernel's table of locks),
// then, once released but guarded by a job of its command, that its guard
// is held, then that it is free.
func TestOtherUserReadsADaemonsLockStatus(t *testing.T) {
	platformtest.NeedRoot(t)
	dir := platformtest.ModeDir(t, 0o755)
	path := filepath.Join(dir, "daemon.lock")
	status := collabAsNobody(t)
	daemon, pids := startCollab(t, "lock", path, "--", "sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $$ $!; wait")
	if out, code := status(dir, "lock", "status", path); code != 0 || !strings.Contains(out, "held by pid "+strconv.Itoa(daemon.Process.Pid)) {
		t.Fatalf("status as nobody while the daemon holds it: exit %d, %q; want held by pid %d", code, out, daemon.Process.Pid)
	}
	killCollab(t, daemon) // the command dies with it; its job runs on, with the guard
	if !gone(pids[0]) {
		t.Fatal("the daemon's command outlived it")
	}
	if out, code := status(dir, "lock", "status", path); code != 0 || !strings.Contains(out, command.GuardSuffix) || !strings.Contains(out, "taken by pid "+strconv.Itoa(daemon.Process.Pid)) {
		t.Fatalf("status as nobody while the command's job holds the guard: exit %d, %q; want the guard held, taken by pid %d", code, out, daemon.Process.Pid)
	}
	if err := syscall.Kill(pids[1], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !gone(pids[1]) {
		t.Fatal("the job outlived SIGKILL")
	}
	if out, code := status(dir, "lock", "status", path); code != 1 || !strings.Contains(out, "free") {
		t.Fatalf("status as nobody once the job is gone: exit %d, %q; want free", code, out)
	}
}
