//go:build linux || darwin

package plock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rivus/collab/internal/childproc"
	"github.com/rivus/collab/internal/sqlitelock"
	"github.com/rivus/collab/platform/sqlite"
)

// backends are the lock's two modes as a child selects them, the SQLite
// mode both through SQLite and through the kernel alone.
var backends = []string{backendSQLite, backendKernel, backendFile}

// sqliteBackends are the two ways of taking the SQLite mode's lock.
var sqliteBackends = []string{backendSQLite, backendKernel}

// startChild starts the test binary as a child in mode on the lock at
// path, with env added.
func startChild(t *testing.T, mode, backend, path string, env ...string) *childproc.Child {
	t.Helper()
	return childproc.Start(t, append([]string{helperEnv + "=" + mode, backendEnv + "=" + backend, pathEnv + "=" + path}, env...)...)
}

// finish closes the child's stdin so that it releases the lock and exits.
func finish(t *testing.T, c *childproc.Child) {
	t.Helper()
	if err := c.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	c.Expect(t, "released")
	if err := c.Wait(); err != nil {
		t.Fatalf("child %d: %v", c.Pid(), err)
	}
}

// holdingChild starts a child that holds the lock at path.
func holdingChild(t *testing.T, backend, path string) *childproc.Child {
	t.Helper()
	c := startChild(t, helperHold, backend, path)
	c.Expect(t, "held")
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
			heldByPID(t, backend, path, c.Pid())
			second := startChild(t, helperHold, backend, path)
			second.Expect(t, "busy")
			finish(t, c)
			acquireNow(t, backend, path)
		})
	}
}

func TestProcessSIGKILLFreesLock(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "daemon.lock")
			c := holdingChild(t, backend, path)
			heldByPID(t, backend, path, c.Pid())
			c.Signal(t, syscall.SIGKILL)
			var exit *exec.ExitError
			if err := c.Wait(); !errors.As(err, &exit) {
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
			c.Signal(t, syscall.SIGSTOP)
			heldByPID(t, backend, path, c.Pid())
			if held, err := IsHeld(context.Background(), childPlatform(backend), path); err != nil || !held {
				t.Errorf("IsHeld while the holder is stopped = %v, %v; want true", held, err)
			}
			c.Signal(t, syscall.SIGCONT)
			finish(t, c)
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
	c.Expect(t, "busy")
}

func TestProcessesNeverHoldTogether(t *testing.T) {
	const (
		procs  = 8
		rounds = 50
	)
	// Each run's children take turns at the backends it lists: "sqlite+kernel"
	// takes the SQLite mode's lock through SQLite and through the kernel
	// alone, which must exclude each other.
	runs := append(slices.Clone(backends), backendSQLite+"+"+backendKernel)
	for _, run := range runs {
		t.Run(run, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "daemon.lock")
			marker := filepath.Join(dir, "holder.marker")
			children := make([]*childproc.Child, procs)
			modes := strings.Split(run, "+")
			for i := range children {
				children[i] = startChild(t, helperStress, modes[i%len(modes)], path,
					markerEnv+"="+marker, fmt.Sprintf("%s=%d", roundsEnv, rounds))
			}
			for _, c := range children { // start them together
				if _, err := io.WriteString(c.Stdin, "go\n"); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range children {
				err := c.Wait()
				var exit *exec.ExitError
				switch {
				case errors.As(err, &exit) && exit.ExitCode() == exitViolation:
					t.Errorf("child %d held the lock together with another process", c.Pid())
				case err != nil:
					t.Errorf("child %d: %v", c.Pid(), err)
				}
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("marker left behind: %v", err)
			}
		})
	}
}

// TestIsHeldProbeKeepsThisProcesssLock: the kernel's lock query reads
// another descriptor of the lock database, which this process never
// closes: closing it would drop this process's own SQLite lock. After
// probes behind a holder of this process, another process still finds
// the lock busy.
func TestIsHeldProbeKeepsThisProcesssLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.lock")
	l, err := Acquire(context.Background(), sqlite.OS(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	for range 3 {
		held, _, err := sqlitelock.LockHeld(path, turns.busyPath)
		if err != nil || held {
			t.Fatalf("the query = %v, %v; want false: it cannot see this process's locks", held, err)
		}
	}
	other := startChild(t, helperHold, backendSQLite, path)
	other.Expect(t, "busy")
}

// TestIsHeldSaysWhatIsNotADatabase: the kernel's query finds no lock on a
// file that is not a SQLite database; IsHeld names it instead of calling
// it free, as an attempt through SQLite would. An empty file is a lock
// database not yet written: free.
func TestIsHeldSaysWhatIsNotADatabase(t *testing.T) {
	dir := t.TempDir()
	garbage, empty := filepath.Join(dir, "garbage.lock"), filepath.Join(dir, "empty.lock")
	if err := os.WriteFile(garbage, []byte("not a database at all, and longer than a header"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if held, err := IsHeld(context.Background(), sqlite.OS(), garbage); held || err == nil || !strings.Contains(err.Error(), garbage) || !strings.Contains(err.Error(), "not a database") {
		t.Errorf("IsHeld(garbage) = %v, %v; want an error naming the file", held, err)
	}
	if held, err := IsHeld(context.Background(), sqlite.OS(), empty); held || err != nil {
		t.Errorf("IsHeld(empty) = %v, %v; want free", held, err)
	}
}

// TestInspectTellsAPlantedStamp: SQLite's .holder stamp is written by
// whoever could, and is diagnostics only; the kernel knows which process
// holds SQLite's locks. A stamp that names another process of this
// process table than the one the kernel names is reported as such, with
// the holder's pid.
func TestInspectTellsAPlantedStamp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.lock")
	holder := startChild(t, helperHold, backendSQLite, path)
	holder.Expect(t, "held")
	defer finish(t, holder)
	r, err := Inspect(context.Background(), sqlite.OS(), path)
	if err != nil || !r.Held || r.LockPID != holder.Pid() || r.StampMismatch || r.Holder == nil || r.Holder.PID != holder.Pid() {
		t.Fatalf("Inspect with the holder's own stamp = %+v, %v; want held by pid %d, stamp matching", r, err, holder.Pid())
	}
	forged := *r.Holder
	forged.PID = 1
	if err := os.Remove(path + holderSuffix); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+holderSuffix, forged.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = Inspect(context.Background(), sqlite.OS(), path)
	if err != nil || !r.Held || r.LockPID != holder.Pid() || !r.StampMismatch || r.Holder.PID != 1 {
		t.Fatalf("Inspect with a stamp naming pid 1 = %+v, %v; want held by pid %d, the stamp a mismatch", r, err, holder.Pid())
	}
	// A refused acquisition names the kernel's holder, not the stamp's.
	_, err = Acquire(context.Background(), sqlite.OS(), path, Options{})
	var held *HeldError
	if !errors.As(err, &held) || held.Holder != nil || held.LockPID != holder.Pid() || !strings.Contains(err.Error(), fmt.Sprintf("held by pid %d", holder.Pid())) {
		t.Fatalf("Acquire beside a stamp naming pid 1 = %v (%+v); want a *HeldError naming pid %d alone", err, held, holder.Pid())
	}
}

// sqliteTry is one try at a SQLite lock as sqlitelock.TestHookTry hears it.
type sqliteTry struct {
	busy          time.Duration // SQLite's busy timeout
	kernelRefused bool          // refused on the kernel's word, SQLite never opened
}

// sqliteTries records each try at a SQLite lock until the end of the
// test; the returned function reads them.
func sqliteTries(t *testing.T) func() []sqliteTry {
	var (
		mu    sync.Mutex
		tries []sqliteTry
	)
	sqlitelock.TestHookTry = func(busy time.Duration, kernelRefused bool) {
		mu.Lock()
		defer mu.Unlock()
		tries = append(tries, sqliteTry{busy, kernelRefused})
	}
	t.Cleanup(func() { sqlitelock.TestHookTry = nil })
	return func() []sqliteTry {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(tries)
	}
}

// TestProcessRefusalAsksTheKernel: an attempt that does not wait, on a
// lock another process holds, is refused on the kernel's word (the
// holder's write lock on SQLite's lock bytes), naming the holder from its
// stamp, in one try that opens no SQLite: SQLite's busy wait, and the
// first attempt's further tries, are for a check in progress, not for a
// holder.
func TestProcessRefusalAsksTheKernel(t *testing.T) {
	for _, backend := range sqliteBackends {
		t.Run(backend, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "daemon.lock")
			tries := sqliteTries(t)
			acquireNow(t, backend, path)
			if got, want := tries(), []sqliteTry{{firstBusyTimeout, false}}; !slices.Equal(got, want) {
				t.Fatalf("a free lock was tried %+v, want %+v: the hook does not hear the tries", got, want)
			}
			c := holdingChild(t, backend, path)
			heldByPID(t, backend, path, c.Pid())
			if got, want := tries()[1:], []sqliteTry{{firstBusyTimeout, true}}; !slices.Equal(got, want) {
				t.Errorf("the refusal was tried %+v, want %+v: one try, refused by the kernel, which names the holder", got, want)
			}
			finish(t, c)
			acquireNow(t, backend, path)
		})
	}
}

// TestProcessSQLiteAndKernelHoldersExcludeEachOther: a holder through
// SQLite and one through the kernel alone (sqlitelock.KernelLocks) take the
// same lock, each refused while the other holds it, naming it; and a
// kernel holder leaves the lock database one that SQLite opens.
func TestProcessSQLiteAndKernelHoldersExcludeEachOther(t *testing.T) {
	for _, pair := range [][2]string{{backendKernel, backendSQLite}, {backendSQLite, backendKernel}} {
		holder, other := pair[0], pair[1]
		t.Run(holder+" holds", func(t *testing.T) {
			for _, fresh := range []bool{true, false} {
				path := filepath.Join(t.TempDir(), "daemon.lock")
				if !fresh {
					acquireNow(t, other, path) // the database exists, written or not
				}
				c := holdingChild(t, holder, path)
				heldByPID(t, other, path, c.Pid())
				if held, err := IsHeld(context.Background(), childPlatform(other), path); err != nil || !held {
					t.Errorf("IsHeld through %s while a %s child holds = %v, %v; want true", other, holder, held, err)
				}
				finish(t, c)
				acquireNow(t, other, path)
				acquireNow(t, holder, path)
			}
		})
	}
}

// TestKernelLockRefusesWhatIsNotADatabase: the kernel alone takes no lock
// on a file that SQLite would not open as a database, and leaves it as
// it was.
func TestKernelLockRefusesWhatIsNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.lock")
	const text = "not a database, but somebody's notes\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(context.Background(), childPlatform(backendKernel), path, Options{})
	if err == nil {
		l.Release()
		t.Fatal("Acquire through the kernel took a lock on a file that is not a database")
	}
	if !errors.Is(err, sqlitelock.ErrNotDatabase) || !strings.Contains(err.Error(), path) {
		t.Errorf("Acquire = %v; want an error naming %s and saying it is not a database", err, path)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != text {
		t.Errorf("the file now holds %q, %v; want it unchanged", b, err)
	}
}

// TestProcessFirstAttemptWaitsOutACheckInAnotherProcess: a check in
// progress in another process (a read transaction through SQLite, as
// IsHeld takes where it cannot ask the kernel) holds a read lock on
// SQLite's lock bytes, which the kernel's answer does not count as a
// holder: the first attempt goes to SQLite, meets the check, and takes
// the free lock on a later try, once the check has ended.
func TestProcessFirstAttemptWaitsOutACheckInAnotherProcess(t *testing.T) {
	for _, backend := range sqliteBackends {
		t.Run(backend, func(t *testing.T) { firstAttemptWaitsOutACheck(t, backend) })
	}
}

func firstAttemptWaitsOutACheck(t *testing.T, backend string) {
	path := filepath.Join(t.TempDir(), "daemon.lock")
	acquireNow(t, backendSQLite, path) // the lock database exists, free
	checker := startChild(t, helperCheck, backendSQLite, path)
	checker.Expect(t, "checking")
	var tries []sqliteTry
	sqlitelock.TestHookTry = func(busy time.Duration, kernelRefused bool) {
		tries = append(tries, sqliteTry{busy, kernelRefused})
		if len(tries) == 2 { // the first try met the check: end it now
			if _, err := io.WriteString(checker.Stdin, "end\n"); err != nil {
				t.Error(err)
			}
			if got := checker.Line(t); got != "done" {
				t.Errorf("checker said %q, want done", got)
			}
		}
	}
	t.Cleanup(func() { sqlitelock.TestHookTry = nil })
	l, err := Acquire(context.Background(), childPlatform(backend), path, Options{})
	if err != nil {
		t.Fatalf("Acquire beside a check in another process = %v, tried %+v; want the free lock", err, tries)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	want := []sqliteTry{{firstBusyTimeout, false}, {firstBusyTimeout, false}}
	if !slices.Equal(tries, want) {
		t.Errorf("the lock was tried %+v, want %+v: the first try meets the check in SQLite, the second gets the lock", tries, want)
	}
	if err := checker.Wait(); err != nil {
		t.Errorf("checker: %v", err)
	}
}
