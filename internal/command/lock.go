package command

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/plock"
)

// ExitHeld is the status of `collab lock` when the lock is held: EX_TEMPFAIL.
const ExitHeld = 75

// RunLock is `collab lock` and `collab lock status`.
func RunLock(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "status" {
		return runLockStatus(args[1:], stdout, stderr)
	}
	outer := outerGuards() // before this process opens a file of its own
	fs := flag.NewFlagSet("collab lock", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wait := fs.Bool("wait", false, "wait for the holder instead of exiting 75 at once")
	timeout := DurationFlag(fs, "timeout", 0, "with --wait, give up after this long (0: wait for ever)")
	lockFile := fs.Bool("lock-file", false, lockFileUsage)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: collab lock [--wait] [--timeout DURATION] [--lock-file] PATH -- COMMAND [ARG...]\n       collab lock status [--json] [--lock-file] PATH")
		fmt.Fprintln(stderr, "The command gets the lock's guard as descriptor $"+GuardEnv+": the lock stays held until every\nprocess holding it has ended; close it in a process that must outlive the lock. Exit status:\nthe command's; 75 the lock is held (or the wait timed out); 1 the lock failed; 2 bad usage.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rest := fs.Args()
	if len(rest) < 3 || rest[1] != "--" {
		fmt.Fprintln(stderr, "collab lock: a lock PATH, then --, then the command to run are required")
		fs.Usage()
		return 2
	}
	if err := NonNegative("timeout", *timeout, "wait for ever"); err != nil {
		fmt.Fprintf(stderr, "collab lock: %v\n", err)
		return 2
	}
	if FlagSet(fs, "timeout") && !*wait {
		fmt.Fprintln(stderr, "collab lock: --timeout: bounds the wait of --wait, which is not given")
		return 2
	}
	path, argv := rest[0], rest[2:]
	ctx := context.Background()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	p := lockPlatform(*lockFile)
	if path == "" {
		fmt.Fprintln(stderr, "collab lock: the lock path is empty")
		return 2
	}
	warnShared(p, path, stderr)
	lock, err := plock.Acquire(ctx, p, path, plock.Options{Wait: *wait})
	if err != nil {
		return lockFailed(stderr, path, err)
	}
	defer lock.Release()
	guard, err := takeGuard(ctx, p, path, *wait)
	if err != nil {
		return lockFailed(stderr, path, err)
	}
	defer guard.Unlock()
	c := Child{Argv: argv, Stdin: stdin, Stdout: stdout, Stderr: stderr}
	inheritGuard(&c, guard, outer)
	status, _ := Supervise(c)
	return status
}

// lockFileUsage says what --lock-file does.
const lockFileUsage = "take the lock as a lock file, not a SQLite database: for a directory other users can write in, such as /tmp; every user of the lock must say it"

// lockPlatform is the platform of a lock: without SQLite in lock-file
// mode.
func lockPlatform(lockFile bool) *platform.Platform {
	p := Host()
	if lockFile {
		c := *p
		c.SQLite = nil
		p = &c
	}
	return p
}

// joinInts writes ns as a comma-separated list.
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// lockFailed reports a failed acquisition: held (or timed out waiting)
// exits 75 naming the holder, anything else 1.
func lockFailed(stderr io.Writer, path string, err error) int {
	var held *plock.HeldError
	switch {
	case errors.As(err, &held) && held.Holder != nil:
		fmt.Fprintf(stderr, "collab lock: %s is held by pid %d on %s\n", path, held.Holder.PID, platform.Printable(held.Holder.Host))
		return ExitHeld
	case errors.As(err, &held) && held.LockPID != 0:
		fmt.Fprintf(stderr, "collab lock: %s is held by pid %d\n", path, held.LockPID)
		return ExitHeld
	case errors.Is(err, plock.ErrHeld):
		fmt.Fprintf(stderr, "collab lock: %s is held (holder unknown)\n", path)
		return ExitHeld
	case errors.Is(err, errGuardHeld):
		fmt.Fprintf(stderr, "collab lock: %s is %v\n", path, err)
		return ExitHeld
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(stderr, "collab lock: %s: timed out waiting for the holder\n", path)
		return ExitHeld
	}
	fmt.Fprintf(stderr, "collab lock: %v\n", err)
	return 1
}

// warnShared warns when the lock's directory is one another user may
// write in, or owns: that user could remove the lock file, or a stale
// stamp, and let a second holder in.
func warnShared(p *platform.Platform, path string, stderr io.Writer) {
	dir, err := p.FS.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return // Acquire says what is wrong with it
	}
	if err := platform.TrustedDir(p.FS, dir); errors.As(err, new(*platform.UntrustedDirError)) {
		fmt.Fprintf(stderr, "collab lock: warning: %v; another user could break this lock\n", err)
	}
}

// Child is a command to run while a lock or lease is held.
type Child struct {
	Argv           []string
	Env            []string   // added to this process's environment
	Files          []*os.File // passed as descriptors 3, 4, …
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Lost           <-chan struct{} // when closed, the child is stopped
	Grace          time.Duration   // between SIGTERM and SIGKILL after lost
}

// privateEnv are collab's own variables, which the command does not get:
// the store may carry a password, and the worker's switch would make any
// collab the command runs a campaign worker.
var privateEnv = []string{StoreEnv, TortureWorkerEnv}

// TortureWorkerEnv is torture.EnvWorker, the switch that makes a collab a
// campaign worker, named here so that the small command strips it
// without linking the campaign (collab's tests hold the two equal).
const TortureWorkerEnv = "COLLAB_TORTURE_WORKER"

// commandEnviron returns environ without collab's own variables
// (privateEnv).
func commandEnviron(environ []string) []string {
	out := environ[:0:0]
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(privateEnv, name) {
			out = append(out, kv)
		}
	}
	return out
}

// Supervise runs c to its end, passing on the signals that would end this
// process. When c.Lost closes it sends the child SIGTERM, then SIGKILL
// after c.Grace. It returns the child's exit status (128+N when signal N
// killed it), and whether c.Lost closed.
func Supervise(c Child) (status int, lost bool) {
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, c.Stdout, c.Stderr
	// Background jobs of the command may keep its output pipes open (when
	// collab's own are not files); once the command has exited, wait no
	// longer than this for them, then stop them (below).
	cmd.WaitDelay = time.Second
	cmd.ExtraFiles = c.Files
	cmd.Env = append(commandEnviron(os.Environ()), c.Env...)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, ForwardedSignals...)
	defer signal.Stop(sigs)
	// The parent-death signal follows the thread that started the child:
	// keep this goroutine on it until the child has ended.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ownGroup, err := startChild(cmd, c.Stdin)
	if err != nil {
		fmt.Fprintf(c.Stderr, "collab: %v\n", err)
		return 127, false
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var kill <-chan time.Time
	for {
		select {
		case s := <-sigs:
			signalChild(cmd, ownGroup, s)
		case <-c.Lost:
			c.Lost, lost = nil, true
			signalChild(cmd, ownGroup, terminateSignal)
			timer := time.NewTimer(c.Grace)
			defer timer.Stop()
			kill = timer.C
		case <-kill:
			signalChild(cmd, ownGroup, os.Kill)
		case err := <-done:
			if ownGroup {
				// The command's background jobs end with it: they would
				// run on without the lock.
				signalChild(cmd, ownGroup, os.Kill)
			}
			return exitStatus(err, c.Stderr), lost
		}
	}
}

func exitStatus(err error, stderr io.Writer) int {
	var exit *exec.ExitError
	if err == nil || errors.Is(err, exec.ErrWaitDelay) { // exited 0; only its pipes were left open
		return 0
	}
	if !errors.As(err, &exit) {
		fmt.Fprintf(stderr, "collab lock: %v\n", err)
		return 1
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return exit.ExitCode()
}

// lockStatus is the --json form of `collab lock status`.
type lockStatus struct {
	Path   string `json:"path"`
	Held   bool   `json:"held"`
	Holder any    `json:"holder"`
	// Guard: the lock is free, but processes of a command that ran under
	// it still hold its guard, so `collab lock` waits for them.
	Guard bool `json:"guard,omitempty"`
	// GuardPIDs are the processes the kernel names as holding the guard,
	// where it can tell (linux).
	GuardPIDs []int `json:"guardPids,omitempty"`
	// LockPID is the process the kernel names as holding a SQLite lock;
	// StampMismatch says that Holder (its stamp) names another one.
	LockPID       int  `json:"lockPid,omitempty"`
	StampMismatch bool `json:"stampMismatch,omitempty"`
}

func runLockStatus(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("collab lock status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	lockFile := fs.Bool("lock-file", false, lockFileUsage)
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: collab lock status [--json] [--lock-file] PATH")
		return 2
	}
	path := fs.Arg(0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := lockPlatform(*lockFile)
	r, err := plock.Inspect(ctx, p, path)
	if err != nil {
		fmt.Fprintf(stderr, "collab lock status: %v\n", err)
		return 2
	}
	if p.SQLite != nil {
		// What another user may have planted there (a database a reader
		// of theirs keeps busy) is no lock of collab's: say why it
		// refuses the path, whatever the status. Judged as plock judges
		// it: the directory with its links resolved.
		if resolved, err := platform.ResolveDir(p.FS, path); err == nil {
			err := platform.SQLiteDir(p.FS, filepath.Dir(resolved), "collab lock --lock-file, which every user of the lock must then use")
			if errors.As(err, new(*platform.SharedDirError)) {
				fmt.Fprintf(stderr, "collab lock status: warning: %v; collab lock run by this user refuses it\n", err)
			}
		}
	}
	guarded, guardPIDs := false, []int(nil)
	if !r.Held {
		guarded, guardPIDs = guardStatus(path+GuardSuffix, stderr)
	}
	if *asJSON {
		st := lockStatus{Path: path, Held: r.Held || guarded, Guard: guarded, GuardPIDs: guardPIDs, LockPID: r.LockPID, StampMismatch: r.StampMismatch}
		if r.Holder != nil {
			st.Holder = r.Holder
		}
		b, _ := json.Marshal(st)
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		fmt.Fprintln(stdout, describeStatus(path, r, guarded, guardPIDs))
	}
	if r.Held || guarded {
		return 0
	}
	return 1
}

// guardStatus says whether the guard at name is held, and by which
// processes where the kernel tells. A guard that is not a regular file
// (a FIFO or a link another user planted) is named on stderr, and is not
// held: collab lock refuses it, naming it.
func guardStatus(name string, stderr io.Writer) (bool, []int) {
	guarded, err := platform.FileLocked(name)
	if errors.Is(err, fs.ErrPermission) {
		// Another user's guard (a root daemon's lock): the kernel's
		// table of locks says who holds it, where there is one (linux).
		if pids, lerr := platform.FlockHolders(name); lerr == nil {
			return len(pids) > 0, pids
		}
		fmt.Fprintf(stderr, "collab lock status: warning: %v; whether its guard is held is unknown\n", err)
		return false, nil
	}
	if errors.Is(err, platform.ErrNotOwned) {
		// Another user's guard, which their collab lock may hold: the
		// kernel's table says (linux), for this user's refusal.
		held := ""
		if pids, lerr := platform.FlockHolders(name); lerr == nil && len(pids) > 0 {
			held = " (it is held, by pid " + joinInts(pids) + ")"
		}
		fmt.Fprintf(stderr, "collab lock status: warning: %v%s; collab lock run by this user refuses it\n", err, held)
		return false, nil
	}
	if err != nil {
		fmt.Fprintf(stderr, "collab lock status: warning: %v; collab lock refuses it\n", err)
		return false, nil
	}
	if !guarded {
		return false, nil
	}
	pids, _ := platform.FlockHolders(name) // for people: unknown is fine
	return true, pids
}

func describeStatus(path string, r plock.Report, guarded bool, guardPIDs []int) string {
	switch {
	case guarded && len(guardPIDs) > 0:
		return fmt.Sprintf("%s: %s (the guard was taken by pid %s; its descriptor may have passed to other processes since)",
			path, errGuardHeld, joinInts(guardPIDs))
	case guarded:
		return path + ": " + errGuardHeld.Error()
	case !r.Held:
		return path + ": free"
	case r.StampMismatch:
		return fmt.Sprintf("%s: held by pid %d; its .holder stamp names pid %d on %s, which does not hold it (stale or planted)",
			path, r.LockPID, r.Holder.PID, platform.Printable(r.Holder.Host))
	case r.Holder == nil && r.LockPID != 0:
		return fmt.Sprintf("%s: held by pid %d", path, r.LockPID)
	case r.Holder == nil:
		return path + ": held (holder unknown)"
	}
	return fmt.Sprintf("%s: held by pid %d on %s", path, r.Holder.PID, platform.Printable(r.Holder.Host))
}
