package torture

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	lz "github.com/rivus/collab/linearizability"
	"github.com/rivus/collab/platform"
)

// Words of the events file for the command-line rounds.
const (
	noteCommandLock      = "cmdlock"          // a command ran under `collab lock`
	noteCommandKernel    = "cmdlock-kernel"   // … of the small collab, through the kernel
	noteCommandRefused   = "cmdlock-held"     // `collab lock` found the lock held
	noteCommandOrphan    = "cmdlock-killed"   // `collab lock` was killed under its running command
	noteLeaseRun         = "leaserun"         // a command ran under `collab lease run`
	noteLeaseRunTimedOut = "leaserun-timeout" // `collab lease run --wait` gave up waiting
)

// commandKey names the command-line lock every worker's commands take
// (one, so that they meet), and its fenced sections in the history.
const commandKey = "cmd"

// Exit statuses of `collab lock` and `collab lease run`: the lock or
// lease is held; the arguments were refused.
const (
	exitHeld   = 75
	exitMisuse = 2
)

// heldCommand is a command run under `collab lock`: a shell whose
// background job waits for the shell's stdin to end, holding the lock's
// guard, which it inherits; the shell says it runs (one line on stdout)
// and waits for the job. Killed with `collab lock` (a parent-death
// signal, on linux), the shell leaves the job running: only the guard
// then keeps the lock.
var heldCommand = []string{"/bin/sh", "-c", "exec 4<&0; (read _ <&4) & echo; wait"}

// leasedCommand is a command run under `collab lease run`: it says the
// lease's token, then waits for its stdin to end.
var leasedCommand = []string{"/bin/sh", "-c", `echo "$COLLAB_LEASE_TOKEN"; read _`}

// commandRun is a collab process running a command that says one line
// once it runs, then runs until the worker closes its stdin.
type commandRun struct {
	cmd    *exec.Cmd
	stdin  *os.File      // the worker's end
	stderr *bytes.Buffer // what collab and the command wrote there, if kept
}

// startCommand starts collab with args and waits for its command's first
// line: ok is false, with the process reaped, when it ended without
// running the command. With keepStderr, the process's stderr is kept in
// r.stderr, which Wait then reads to its end: only for a process whose
// command ends with it. Otherwise it goes to the worker's own.
func (w *worker) startCommand(exe string, args []string, keepStderr bool) (r *commandRun, line string, ok bool, err error) {
	r = &commandRun{cmd: exec.Command(exe, args...)}
	r.cmd.Stderr = os.Stderr
	if keepStderr {
		r.stderr = new(bytes.Buffer)
		r.cmd.Stderr = r.stderr
	}
	// A pipe of the worker's own, not StdinPipe, which Wait closes: a
	// command may run on after its collab process is killed and reaped,
	// until the worker closes its end (or dies).
	cmdIn, stdin, err := os.Pipe()
	if err != nil {
		return nil, "", false, err
	}
	r.stdin, r.cmd.Stdin = stdin, cmdIn
	stdout, err := r.cmd.StdoutPipe()
	if err == nil {
		err = r.cmd.Start()
	}
	if err := errors.Join(err, cmdIn.Close()); err != nil {
		return nil, "", false, errors.Join(fmt.Errorf("torture: starting %v: %w", r.cmd.Args, err), stdin.Close())
	}
	if err := w.noteCommandProcess(r.cmd.Process.Pid); err != nil {
		_ = r.cmd.Process.Kill()
		return nil, "", false, errors.Join(err, r.wait(), stdin.Close())
	}
	lines := make(chan string, 1)
	go func() {
		l, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			l = ""
		}
		lines <- l
	}()
	select {
	case l := <-lines:
		if l == "" { // no line: collab ended without running it
			return r, "", false, errors.Join(r.wait(), r.stdin.Close())
		}
		return r, strings.TrimSpace(l), true, nil
	case <-time.After(opTimeout):
		_ = r.cmd.Process.Kill()
		return nil, "", false, errors.Join(fmt.Errorf("torture: %v did not run its command within %v", r.cmd.Args, opTimeout), r.wait(), r.stdin.Close())
	}
}

// wait reaps the collab process; an exit status is not an error here.
func (r *commandRun) wait() error {
	err := r.cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return nil
	}
	return err
}

// status is the collab process's exit status once reaped, -1 if it was
// killed.
func (r *commandRun) status() int { return r.cmd.ProcessState.ExitCode() }

// commandLockRound runs a command under the command-line lock
// (`collab lock PATH -- COMMAND`, with --lock-file on the file store).
// The command's run is a fenced section of the object commandKey,
// recorded by this worker from inside the lock: it enters once the
// command has said it runs, and leaves before telling it to end. One time
// in three the worker SIGKILLs `collab lock` while the command runs, and
// holds on for a TTL: the guard the command inherited must keep the lock
// until the command ends. A `collab lock` that finds the lock held exits
// 75, and nothing is recorded.
func (w *worker) commandLockRound() error {
	args, exe := []string{"lock"}, w.a.Collab
	if w.a.Store == StoreFile {
		args = append(args, "--lock-file")
	} else if w.a.CollabLock != "" && w.rng.IntN(2) == 0 {
		exe = w.a.CollabLock
	}
	args = append(append(args, filepath.Join(w.a.Dir, locksDir, commandKey+".lock"), "--"), heldCommand...)
	// Its stderr is the worker's: a command killed with it runs on
	// holding the pipe of a kept stderr, which Wait would wait for.
	r, _, ok, err := w.startCommand(exe, args, false)
	switch {
	case err != nil:
		return err
	case !ok && r.status() == exitHeld:
		w.note(noteCommandRefused)
		return nil
	case !ok:
		return fmt.Errorf("torture: %v exited %d without running its command (its stderr is in the worker's log)", r.cmd.Args, r.status())
	}
	defer r.stdin.Close() // the command ends, whatever happens here
	leave, err := w.section(commandKey)
	if err != nil {
		return err
	}
	w.note(noteCommandLock)
	if exe != w.a.Collab {
		w.note(noteCommandKernel)
	}
	killed := w.rng.IntN(3) == 0
	if killed {
		// The command runs on, holding the guard; its section goes on
		// until it is told to end.
		_ = r.cmd.Process.Kill()
		_ = r.wait()
		w.note(noteCommandOrphan)
		time.Sleep(w.a.TTL) // so that other workers try the lock meanwhile
	}
	w.nap()
	leave()
	if err := r.stdin.Close(); err != nil || killed {
		return err
	}
	if err := r.wait(); err != nil || r.status() != 0 {
		return fmt.Errorf("torture: %v exited %d: %v (its stderr is in the worker's log)", r.cmd.Args, r.status(), err)
	}
	return nil
}

// commandProcess is the history's process number of worker p's k-th
// `collab lease run`: above every worker's (the controller numbers them
// from 1, one a start), and apart for every worker.
func commandProcess(p, k int) int { return 1_000_000_000 + p*100_000 + k%100_000 }

// leaseRunStore is the --store of `collab lease run` for the run's
// store, or "" where the command line cannot name it (PostgreSQL in the
// run's own schema, a store of the caller's).
func leaseRunStore(a assignment) string {
	switch a.Store {
	case StoreSQLite:
		return filepath.Join(a.Dir, leasesDB)
	case StoreFile:
		return "dir:" + filepath.Join(a.Dir, leasesFiles)
	}
	return ""
}

// leaseRunRound runs a command under key's lease with `collab lease run
// --wait`, waiting up to two TTLs. The lease is recorded on the key's
// lease object as the library's are, as operations of a process of its
// own in the history (commandProcess), since the collab process acts, not
// the worker, and may outlive it: an Acquire from the start to the
// command's first line, the token it was given (of unknown outcome when
// it ended without running the command: a wait that timed out may have
// cut an attempt short); and a Release of that token from the worker's
// telling the command to end to the collab process's exit (Done when it
// exits 0, which it does once its tombstone is written or the lease
// found lost; of unknown outcome otherwise). Every collab process's pid
// goes to the worker's commands file as it starts, for the check of
// judgements (judged.go).
func (w *worker) leaseRunRound(key string) error {
	w.leaseRuns++
	rec := lz.NewRecorder(w.hist, commandProcess(w.a.Process, w.leaseRuns), platform.RealClock())
	args := append([]string{"lease", "run", "--store", leaseRunStore(w.a), "--key", key,
		"--ttl", w.a.TTL.String(), "--heartbeat", w.a.Heartbeat.String(), "--grace", (w.a.Heartbeat / 2).String(),
		"--wait", "--timeout", (2 * w.a.TTL).String(), "--"}, leasedCommand...)
	p, err := rec.Begin(key, lz.Acquire, lz.Input{})
	if err != nil {
		return err
	}
	r, line, ok, err := w.startCommand(w.a.Collab, args, true)
	if err != nil || !ok {
		// A wait that timed out may have cut an attempt short, which the
		// command line does not say: of unknown outcome, as any other end.
		reason := reasonCommand
		switch {
		case err == nil && r.status() == exitHeld:
			w.note(noteLeaseRunTimedOut)
			reason = reasonTimeout
		case err == nil && r.status() == exitMisuse:
			err = fmt.Errorf("torture: %v refused its arguments: %s", r.cmd.Args, r.stderr.String())
		}
		return errors.Join(err, p.End(unknownFor(reason)))
	}
	defer r.stdin.Close()
	token, err := strconv.ParseUint(line, 10, 64)
	if err != nil {
		return errors.Join(fmt.Errorf("torture: %v's command printed %q, not a token", r.cmd.Args, line), p.End(unknownFor(reasonCommand)))
	}
	if err := p.End(lz.Output{Status: lz.OK, Gen: token}); err != nil {
		return err
	}
	w.note(noteLeaseRun)
	w.nap()
	return w.recordOn(rec, key, lz.Release, lz.Input{Token: token}, func(context.Context) lz.Output {
		if r.stdin.Close() != nil || r.wait() != nil || r.status() != 0 {
			return unknownFor(reasonCommand)
		}
		return outDone
	})
}
