package torture

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Words of the events file for command-line lock rounds.
const (
	noteCommandLock    = "cmdlock"        // a command ran under `collab lock`
	noteCommandRefused = "cmdlock-held"   // `collab lock` found the lock held
	noteCommandOrphan  = "cmdlock-killed" // `collab lock` was killed under its running command
)

// heldCommand is the command run under `collab lock`: a shell whose
// background job waits for the shell's stdin to end, holding the lock's
// guard, which it inherits; the shell says it runs (one line on stdout)
// and waits for the job. Killed with `collab lock` (a parent-death
// signal, on linux), the shell leaves the job running: only the guard
// then keeps the lock.
var heldCommand = []string{"/bin/sh", "-c", "exec 4<&0; (read _ <&4) & echo; wait"}

// commandKey names the command-line lock every worker's commands take
// (one, so that they meet), and its fenced sections in the history.
const commandKey = "cmd"

// commandLockRound runs a command under the command-line lock
// (Config.LockCommand, `collab lock PATH -- COMMAND`, with --lock-file on
// the file store). The command's run is a fenced section of the object
// commandKey, recorded by this worker from inside the lock: it enters
// once the command has said it runs, and leaves before telling it to
// end. One time in three the worker SIGKILLs `collab lock` while the
// command runs, and holds on for a TTL: the guard the command inherited
// must keep the lock until the command ends. A `collab lock` that finds
// the lock held exits 75, and nothing is recorded.
func (w *worker) commandLockRound() error {
	args := append([]string{}, w.a.LockCommand[1:]...)
	if w.a.Store == StoreFile {
		args = append(args, "--lock-file")
	}
	path := filepath.Join(w.a.Dir, locksDir, commandKey+".lock")
	args = append(append(args, path, "--"), heldCommand...)
	cmd := exec.Command(w.a.LockCommand[0], args...)
	// A pipe of the worker's own, not StdinPipe, which Wait closes: the
	// command must run on after `collab lock` is killed and reaped, until
	// the worker closes its end (or dies).
	cmdIn, stdin, err := os.Pipe()
	if err != nil {
		return err
	}
	defer stdin.Close() // the command ends, whatever happens here
	cmd.Stdin = cmdIn
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return errors.Join(err, cmdIn.Close())
	}
	err = cmd.Start()
	if err := errors.Join(err, cmdIn.Close()); err != nil {
		return fmt.Errorf("torture: starting %v: %w", cmd.Args, err)
	}
	running := make(chan error, 1)
	go func() {
		_, err := bufio.NewReader(stdout).ReadString('\n')
		running <- err
	}()
	select {
	case err := <-running:
		if err != nil { // no line: `collab lock` ended without running it
			return w.commandLockEnded(cmd)
		}
	case <-time.After(opTimeout):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("torture: %v did not run its command within %v", cmd.Args, opTimeout)
	}
	leave, err := w.section(commandKey)
	if err != nil {
		return err
	}
	w.note(noteCommandLock)
	killed := w.rng.IntN(3) == 0
	if killed {
		// The command runs on, holding the guard; its section goes on
		// until it is told to end.
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		w.note(noteCommandOrphan)
		time.Sleep(w.a.TTL) // so that other workers try the lock meanwhile
	}
	w.nap()
	leave()
	if err := stdin.Close(); err != nil {
		return err
	}
	if killed {
		return nil
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("torture: %v: %w", cmd.Args, err)
	}
	return nil
}

// exitHeld is `collab lock`'s exit status when the lock is held.
const exitHeld = 75

// commandLockEnded reaps a `collab lock` that ended without running its
// command: held is counted, any other end is an error.
func (w *worker) commandLockEnded(cmd *exec.Cmd) error {
	err := cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == exitHeld {
		w.note(noteCommandRefused)
		return nil
	}
	return fmt.Errorf("torture: %v ended without running its command: %w", cmd.Args, errors.Join(err, io.ErrUnexpectedEOF))
}
