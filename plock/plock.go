package plock

import (
	"context"
	"errors"
	"io/fs"
	"strconv"
	"sync"
	"time"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/internal/errwrap"
	"github.com/rivus/collab/internal/lockbackend"
	"github.com/rivus/collab/internal/sqliteos"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/policy"
)

// Options configure Acquire. The zero value fails at once when the lock
// is held.
type Options struct {
	// Wait makes Acquire wait for the holder instead of returning a
	// *HeldError at once.
	Wait bool
	// Policy is the turn policy that orders this process's acquisitions
	// of one lock; nil means fsm.TurnPolicy. It must be of the "turn"
	// family.
	Policy policy.Policy
	// Metrics, if set, hears how the call ended; nil means none, and
	// costs nothing.
	Metrics Metrics
}

// Metrics receives plock's metrics, in the manner of client-go
// workqueue's MetricsProvider: each method feeds one metric of the library
// of your choice. It hears no paths. Acquire calls it as it returns, from
// the caller's goroutine; it must be safe for concurrent use.
type Metrics interface {
	// Acquired observes a call that took the lock, with how long it
	// took: at once, or after waiting for its turn and the holder.
	Acquired(took time.Duration)
	// Refused counts a call that returned a *HeldError.
	Refused()
	// GaveUp observes a waiting call whose context ended first, with how
	// long it had waited.
	GaveUp(waited time.Duration)
}

// Backoff of Wait's retries against a holder in another process.
const (
	firstBackoff = 2 * time.Millisecond
	maxBackoff   = 100 * time.Millisecond
)

// The first attempt waits out a concurrent IsHeld: SQLite's busy timeout,
// then a few more tries. Only a check: a holder the kernel names (a write
// lock on SQLite's lock bytes) is refused without them.
const (
	firstBusyTimeout = 10 * time.Millisecond
	firstTries       = 4
)

// Lock is a held process lock. Release it when done; the kernel (SQLite)
// or the next acquisition (lock file) frees it if the process dies.
type Lock struct {
	path   string
	holder *platform.Identity
	task   *task
	held   held

	mu       sync.Mutex
	released bool  // the first Release has run
	err      error // what the last Release returned
}

// Path returns the lock's path, its directory resolved through symlinks.
func (l *Lock) Path() string { return l.path }

// Holder returns this process's identity as the lock records it, or nil
// when the process could not read its identity (SQLite mode only).
func (l *Lock) Holder() *platform.Identity { return l.holder }

// Release releases the lock and hands the turn to the next task of this
// process that waits for it. It is idempotent: later calls return the
// first call's error, except where the first could not remove a lock
// file (an I/O error, too many open files): a later call tries again, as
// the file names this live process, which nobody else may remove.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch f, isFile := l.held.(*fileHeld); {
	case !l.released:
		l.released = true
		l.err = unlock(l.task, turns.fire(l.task, trRelease), l.held)
	case l.err != nil && isFile:
		l.err = f.Release()
	}
	return l.err
}

// unlock carries out a step's unlock output: it releases h, then passes
// the turn on if the step asked for that too.
func unlock(t *task, out policy.Outputs, h held) error {
	if !out.Has(outUnlock) {
		return nil
	}
	var err error
	if h != nil {
		err = h.Release()
		if monitoring {
			turns.released(t)
		}
	}
	if out.Has(outPassTurn) {
		turns.finishRelease(t)
	}
	return err
}

// Close is Release, so that a Lock can be deferred like any closer.
func (l *Lock) Close() error { return l.Release() }

// Acquire takes the process lock at path: a SQLite database when p has
// SQLite, else a lock file. When another process holds it, or another task
// of this process holds or attempts it, Acquire returns a *HeldError at
// once, or with opts.Wait waits its turn and then for the holder. A ctx
// that ends while waiting returns context.Cause(ctx) and leaves the other
// tasks' turns as they were, unless the turn was handed to the call
// before it saw the end: it then attempts, as below, so a call cancelled
// just before the holder let go may still return the lock, which its
// caller must release. A ctx that ends while the call attempts the
// lock takes effect after the attempt: an attempt that took the lock
// returns it, as golang.org/x/sync's semaphore does. A nil p is
// sqlite.OS() of platform/sqlite, the SQLite mode, in a program that links
// that package, and an *ArgError in one that does not. A p without FS or
// Process, or an opts.Policy of another family, is an *ArgError.
func Acquire(ctx context.Context, p *platform.Platform, path string, opts Options) (*Lock, error) {
	p, err := checkPlatform(p)
	if err != nil {
		return nil, err
	}
	pol, err := turnPolicy(opts.Policy)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	resolved, err := resolve(p.FS, path)
	if err != nil {
		return nil, err
	}
	a := &acquisition{ctx: ctx, p: p, path: resolved, b: backendFor(p, resolved),
		pause: platform.Backoff{Clock: p.GetClock(), First: firstBackoff, Max: maxBackoff}}
	if self, err := p.Process.Self(); err == nil {
		a.self = &self
	} else if a.b.NeedsIdentity() {
		return nil, errwrap.New("plock: a lock file needs this process's identity", err)
	}
	t, out := turns.request(newTurnKey(opener(p), resolved), pol, opts.Wait)
	if opts.Metrics == nil {
		return a.drive(t, out)
	}
	clock := p.GetClock()
	start := clock.Monotonic()
	l, err := a.drive(t, out)
	measureCall(opts.Metrics, ctx, err, clock.Monotonic()-start)
	return l, err
}

// measureCall tells m how a call that took so long ended with err.
func measureCall(m Metrics, ctx context.Context, err error, took time.Duration) {
	switch {
	case err == nil:
		m.Acquired(took)
	case errors.Is(err, ErrHeld):
		m.Refused()
	case ctx.Err() != nil && errors.Is(err, context.Cause(ctx)):
		m.GaveUp(took)
	}
}

// IsHeld tells whether another process, or an acquisition in this one,
// holds the lock at path, without taking it and without writing anything.
// It looks at ctx once, before it starts, and never waits. The answer may
// be stale by the time it arrives: only Acquire decides who holds the lock.
// A nil p is as in Acquire; a p without FS or Process is an *ArgError.
func IsHeld(ctx context.Context, p *platform.Platform, path string) (bool, error) {
	p, err := checkPlatform(p)
	if err != nil {
		return false, err
	}
	if ctx.Err() != nil {
		return false, context.Cause(ctx)
	}
	resolved, err := resolve(p.FS, path)
	if err != nil {
		return false, err
	}
	if busy, _ := turns.busy(newTurnKey(opener(p), resolved)); busy {
		return true, nil // never open the file behind our own holder
	}
	pr, err := probe(ctx, p, resolved)
	return pr.Held, err
}

// probe asks the backend whether the lock at resolved is held, and adds
// what the kernel's answer leaves out: this process's own locks, of
// another opener of the path, or of an acquisition that began meanwhile.
func probe(ctx context.Context, p *platform.Platform, resolved string) (probed, error) {
	pr, err := backendFor(p, resolved).IsHeld(ctx)
	if !pr.Held && err == nil {
		pr.Held = turns.busyPath(resolved)
	}
	return pr, err
}

func turnPolicy(p policy.Policy) (policy.Policy, error) {
	if p == nil {
		return fsm.TurnPolicy, nil
	}
	if p.Family() != "turn" {
		return nil, &ArgError{"Policy", p.Name() + " is of family " + strconv.Quote(p.Family()) + ", want \"turn\""}
	}
	return p, nil
}

// checkPlatform returns p, what a nil p means (nilPlatform), or an
// *ArgError unless p has what every call uses.
func checkPlatform(p *platform.Platform) (*platform.Platform, error) {
	switch {
	case p == nil:
		return nilPlatform()
	case p.FS == nil:
		return nil, &ArgError{"Platform", "has no FS"}
	case p.Process == nil:
		return nil, &ArgError{"Platform", "has no Process"}
	case p.SQLite != nil && lockbackend.SQLite == nil:
		return nil, &ArgError{"Platform", sqliteNotLinked}
	}
	return p, nil
}

// nilPlatform is what a nil platform means: the SQLite mode, the
// reference's default, in every program, so that two programs that pass
// nil never lock one path in two modes. plock does not import
// platform/sqlite, so that a program that takes only lock files links no
// SQLite; platform/sqlite registers its OS as it initialises. A program
// that does not link it is told how to choose a mode.
func nilPlatform() (*platform.Platform, error) {
	if sqliteos.OS == nil {
		return nil, &ArgError{"Platform", nilWithoutSQLite}
	}
	return sqliteos.OS(), nil
}

// sqliteNotLinked is why a platform with a SQLite is refused in a
// program that links neither platform/sqlite nor the kernel's locks.
const sqliteNotLinked = "has a SQLite, which means the SQLite mode, and this program does not link it: " +
	`import "github.com/rivus/collab/platform/sqlite" (a blank import will do)`

// nilWithoutSQLite is why a nil platform is refused, and what to do.
const nilWithoutSQLite = "is nil, which means the SQLite mode, and this program links no SQLite: " +
	`import "github.com/rivus/collab/platform/sqlite" (a blank import will do) for the SQLite mode, ` +
	"or pass platform.OS() for the lock-file mode, which every user of the lock must then take"

// opener is what decides which callers share turns: the platform's SQLite,
// or without SQLite its file system.
func opener(p *platform.Platform) any {
	if p.SQLite != nil {
		return p.SQLite
	}
	return p.FS
}

// resolve makes path absolute with its directory resolved through
// symlinks, so that every name of one lock shares one queue.
func resolve(fsys platform.FS, path string) (string, error) {
	resolved, err := platform.ResolveDir(fsys, path)
	if err != nil {
		return "", errwrap.New("plock: lock directory of "+path, err)
	}
	// The lock itself is never a link (another user could point it at a
	// file of the caller's) nor a directory: refuse them by name.
	st, err := fsys.Lstat(resolved)
	switch {
	case err == nil && st.Mode()&fs.ModeSymlink != 0:
		return "", errwrap.New("plock: lock path "+path, &fs.PathError{Op: "lock", Path: resolved, Err: platform.ErrSymlink})
	case err == nil && st.IsDir():
		return "", errwrap.New("plock: lock path "+path, &fs.PathError{Op: "lock", Path: resolved, Err: errIsDir})
	}
	return resolved, nil
}

// errIsDir reports a lock path that names a directory.
var errIsDir = errors.New("is a directory, not a lock file (name a file inside it)")

// acquisition is one Acquire call's side of its task: it carries out the
// outputs that do I/O or wait, in the caller's goroutine.
type acquisition struct {
	ctx      context.Context
	p        *platform.Platform
	path     string
	b        backend
	self     *platform.Identity
	attempts int

	held    held               // set by a successful attempt
	holder  *platform.Identity // set by a busy attempt
	lockPID int                // the kernel's holder of a busy attempt, or 0
	err     error              // set by a failed attempt
	pause   platform.Backoff   // between attempts
}

// drive carries out t's outputs until one of them returns from Acquire.
func (a *acquisition) drive(t *task, out policy.Outputs) (*Lock, error) {
	for {
		if out.Has(outUnlock) {
			// A policy may let go of a lock the call took without
			// returning it.
			if err := unlock(t, out, a.held); err != nil && a.err == nil {
				a.err = err
			}
			a.held = nil
			out &^= outUnlock | outPassTurn
		}
		switch {
		case out.Has(outReturnLock):
			return &Lock{path: a.path, holder: a.self, task: t, held: a.held}, nil
		case out.Has(outReturnHeld):
			return nil, &HeldError{Path: a.path, Holder: a.heldBy(t), LockPID: a.heldByPID()}
		case out.Has(outReturnError):
			return nil, a.err
		case out.Has(outReturnCause):
			return nil, context.Cause(a.ctx)
		case out.Has(outAttempt):
			out = a.attempt(t)
		case out.Has(outBackoff):
			out = a.backoff(t)
		case out.Has(outEnqueue):
			out = a.waitTurn(t)
		default:
			panic("plock: turn policy " + t.pol.Name() + " left the call with nothing to do (outputs " + strconv.FormatUint(uint64(out), 2) + ")")
		}
	}
}

// heldBy is the holder a HeldError names: the other process's, or this
// process's own when a task of it holds the lock.
func (a *acquisition) heldBy(t *task) *platform.Identity {
	if a.attempts == 0 {
		return t.seen
	}
	return a.holder
}

// heldByPID is the kernel's holder a HeldError names, or 0: that of the
// last attempt, if any was made.
func (a *acquisition) heldByPID() int {
	if a.attempts == 0 {
		return 0
	}
	return a.lockPID
}

// attempt makes one attempt at the lock. The policy ignores an abort
// while attempting, so the attempt runs to its end, bounded by SQLite's
// busy timeout, whatever ctx does.
func (a *acquisition) attempt(t *task) policy.Outputs {
	ctx := context.WithoutCancel(a.ctx)
	var (
		h   held
		err error
	)
	if monitoring {
		turns.attempting(t)
	}
	if a.attempts == 0 {
		for range firstTries {
			if h, err = a.b.Attempt(ctx, a.self, firstBusyTimeout); !mayBeACheck(err) {
				break
			}
		}
	} else {
		h, err = a.b.Attempt(ctx, a.self, 0)
	}
	a.attempts++
	if monitoring {
		turns.attempted(t, err == nil) // before the step may pass the turn on
	}
	var busy *busyError
	switch {
	case err == nil:
		a.held = h
		return turns.fireSeen(t, trAcquired, a.self)
	case errors.As(err, &busy):
		a.holder, a.lockPID = busy.Holder, busy.PID
		return turns.fireSeen(t, trBusy, busy.Holder)
	}
	a.err = err
	return turns.fire(t, trAttemptFailed)
}

// mayBeACheck reports whether err is a busy lock that another try of the
// first attempt may find free: a check in progress keeps it busy briefly.
// A write lock the kernel named is a holder's, or a taker's: not a check.
func mayBeACheck(err error) bool {
	var (
		busy   *busyError
		locked *writeLockedError
	)
	return errors.As(err, &busy) && !errors.As(err, &locked)
}

// backoff waits before the next attempt, doubling up to maxBackoff.
func (a *acquisition) backoff(t *task) policy.Outputs {
	if a.pause.Wait(a.ctx) != nil {
		return turns.fire(t, trAbort)
	}
	return turns.fire(t, trRetry)
}

// waitTurn waits in the queue until the turn is handed over or ctx ends.
func (a *acquisition) waitTurn(t *task) policy.Outputs {
	select {
	case <-turns.turnSignal(t):
	case <-a.ctx.Done():
	}
	return turns.claimTurn(t)
}

// Report is what Inspect found.
type Report struct {
	// Held tells whether another process, or a task of this one, holds
	// the lock (IsHeld's answer).
	Held bool
	// Holder is the holder's identity when known: the lock file's stamp,
	// or SQLite's <path>.holder (diagnostics, possibly stale or planted).
	Holder *platform.Identity
	// LockPID is the process the kernel names as holding a SQLite lock,
	// where it can tell (linux and darwin, a holder on this process
	// table), else 0.
	LockPID int
	// StampMismatch says that Holder, read from SQLite's .holder stamp,
	// names another process of this process table than LockPID: the stamp
	// is stale or planted, and LockPID holds the lock.
	StampMismatch bool
}

// Inspect is IsHeld for people: it also reads who holds the lock. It
// writes nothing. A nil p is as in Acquire; a p without FS or Process is
// an *ArgError.
func Inspect(ctx context.Context, p *platform.Platform, path string) (Report, error) {
	p, err := checkPlatform(p)
	if err != nil {
		return Report{}, err
	}
	if ctx.Err() != nil {
		return Report{}, context.Cause(ctx)
	}
	resolved, err := resolve(p.FS, path)
	if err != nil {
		return Report{}, err
	}
	if busy, holder := turns.busy(newTurnKey(opener(p), resolved)); busy {
		// A task of this process holds or attempts it: never open the
		// file behind it.
		return Report{Held: true, Holder: holder}, nil
	}
	pr, err := probe(ctx, p, resolved)
	if err != nil {
		return Report{}, err
	}
	r := Report{Held: pr.Held, Holder: pr.Holder, LockPID: pr.PID}
	if r.Held && r.Holder == nil && p.SQLite != nil {
		r.Holder = lockbackend.ReadHolder(p.FS, resolved+lockbackend.HolderSuffix)
		r.StampMismatch = lockbackend.StampMismatch(p, r.Holder, pr.PID)
	}
	return r, nil
}
