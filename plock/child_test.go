package plock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/rivus/collab/internal/sqlitelock"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/sqlite"
)

// The environment of a child process: what it does is helperEnv's value.
const (
	pathEnv    = "COLLAB_PLOCK_TEST_PATH"    // the lock
	backendEnv = "COLLAB_PLOCK_TEST_BACKEND" // backendSQLite, backendKernel or backendFile
	roundsEnv  = "COLLAB_PLOCK_TEST_ROUNDS"  // acquisitions of helperStress
	markerEnv  = "COLLAB_PLOCK_TEST_MARKER"  // helperStress's marker file
)

const (
	backendSQLite = "sqlite"
	backendKernel = "kernel" // the SQLite mode through sqlitelock.KernelLocks
	backendFile   = "file"
)

// Child modes.
const (
	// helperHold takes the lock without waiting and prints "held", or
	// "busy" or "error: ..." and exits; holding, it blocks reading stdin
	// until EOF, then releases the lock, prints "released" and exits.
	helperHold = "hold"
	// helperStress reads one line from stdin (the start signal), then
	// acquires the lock with Wait the number of times in roundsEnv; each
	// time, while it holds the lock, it creates the marker file with
	// O_EXCL, checks that the lock's stamp names it, and removes the
	// marker before releasing.
	helperStress = "stress"
	// helperCheck holds a check in progress: a read transaction through
	// SQLite, whose shared lock is what IsHeld takes where it cannot ask
	// the kernel. It prints "checking" once it holds the shared lock; at
	// the first line on stdin it ends the transaction, closes the
	// database, prints "done" and exits.
	helperCheck = "check"
)

// Exit statuses of a child.
const (
	exitOK        = 0
	exitError     = 2 // something failed that is not the lock's fault
	exitViolation = 3 // two holders at once
)

// runHelper is the body of a child process; it returns its exit status.
func runHelper(mode string) int {
	p := childPlatform(os.Getenv(backendEnv))
	path := os.Getenv(pathEnv)
	var err error
	switch mode {
	case helperHold:
		err = hold(p, path, os.Stdin, os.Stdout)
	case helperStress:
		err = stress(p, path, os.Getenv(markerEnv), os.Getenv(roundsEnv), os.Stdin)
	case helperCheck:
		err = check(p, path, os.Stdin, os.Stdout)
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	var v *violation
	switch {
	case errors.As(err, &v):
		fmt.Fprintln(os.Stderr, "child:", err)
		return exitViolation
	case err != nil:
		fmt.Fprintln(os.Stderr, "child:", err)
		return exitError
	}
	return exitOK
}

// childPlatform is the operating system's platform: with SQLite, with
// SQLite's locks through the kernel alone, or without SQLite for the
// lock-file backend.
func childPlatform(backend string) *platform.Platform {
	switch backend {
	case backendFile:
		return platform.OS()
	case backendKernel:
		p := *platform.OS()
		p.SQLite = sqlitelock.KernelLocks
		return &p
	}
	return sqlite.OS()
}

func hold(p *platform.Platform, path string, stdin io.Reader, stdout io.Writer) error {
	l, err := Acquire(context.Background(), p, path, Options{})
	var held *HeldError
	if errors.As(err, &held) {
		_, err = fmt.Fprintln(stdout, "busy")
		return err
	}
	if err != nil {
		fmt.Fprintln(stdout, "error:", err)
		return err
	}
	if _, err := fmt.Fprintln(stdout, "held"); err != nil {
		return errors.Join(err, l.Release())
	}
	_, err = io.Copy(io.Discard, stdin)
	if err := errors.Join(err, l.Release()); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, "released")
	return err
}

func check(p *platform.Platform, path string, stdin io.Reader, stdout io.Writer) error {
	db, err := p.SQLite.Open(path, platform.SQLiteOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		return errors.Join(err, db.Close())
	}
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		return errors.Join(err, tx.Rollback(), db.Close())
	}
	if _, err := fmt.Fprintln(stdout, "checking"); err != nil {
		return errors.Join(err, tx.Rollback(), db.Close())
	}
	if _, err := bufio.NewReader(stdin).ReadString('\n'); err != nil {
		return errors.Join(fmt.Errorf("waiting for the end of the check: %w", err), tx.Rollback(), db.Close())
	}
	if err := errors.Join(tx.Commit(), db.Close()); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, "done")
	return err
}

// ownStamp checks that the lock's stamp (the lock file, or SQLite's
// .holder) names this process while it holds the lock: a second holder
// would have replaced it, even if the two never overlapped at the marker.
func ownStamp(p *platform.Platform, l *Lock, round int) error {
	name := l.Path()
	if p.SQLite != nil {
		name += holderSuffix
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return &violation{round, fmt.Errorf("read the stamp while holding: %w", err)}
	}
	id, err := platform.ParseIdentity(data)
	if err != nil || id != *l.Holder() {
		return &violation{round, fmt.Errorf("stamp %s is %q, not this holder's %s (%v)", name, data, l.Holder(), err)}
	}
	return nil
}

// violation is a sign of two holders at once.
type violation struct {
	round int
	err   error
}

func (v *violation) Error() string {
	return fmt.Sprintf("round %d: another process holds the lock too: %v", v.round, v.err)
}

func stress(p *platform.Platform, path, marker, rounds string, stdin io.Reader) error {
	n, err := strconv.Atoi(rounds)
	if err != nil {
		return fmt.Errorf("%s: %w", roundsEnv, err)
	}
	if _, err := bufio.NewReader(stdin).ReadString('\n'); err != nil {
		return fmt.Errorf("waiting for the start: %w", err)
	}
	for i := range n {
		if err := stressRound(p, path, marker, i); err != nil {
			return err
		}
	}
	return nil
}

// stressRound holds the lock once, proving with the marker that nobody
// else holds it meanwhile.
func stressRound(p *platform.Platform, path, marker string, round int) error {
	l, err := Acquire(context.Background(), p, path, Options{Wait: true})
	if err != nil {
		return fmt.Errorf("round %d: %w", round, err)
	}
	f, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return errors.Join(&violation{round, err}, l.Release())
	}
	if err == nil {
		err = f.Close()
	}
	if err == nil {
		err = ownStamp(p, l, round)
	}
	if err == nil {
		err = os.Remove(marker)
	}
	return errors.Join(err, l.Release())
}
