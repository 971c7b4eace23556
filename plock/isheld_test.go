package plock

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
	"github.com/rivus/collab/platform/sqlite"
)

func TestIsHeldWritesNothing(t *testing.T) {
	// Each state of the lock is set up from scratch; IsHeld must answer
	// without changing the directory in any way.
	states := []struct {
		name  string
		setup func(t *testing.T, f *platformtest.Fake, path string)
		held  bool
	}{
		{"missing", func(*testing.T, *platformtest.Fake, string) {}, false},
		{"released", func(t *testing.T, f *platformtest.Fake, path string) {
			if err := mustAcquire(t, f.Platform, path).Release(); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"held by another process", func(t *testing.T, f *platformtest.Fake, path string) {
			mustAcquire(t, otherProcess(f, f.Processes.Start()), path)
		}, true},
	}
	for _, m := range modes {
		for _, st := range states {
			t.Run(m.name+"/"+st.name, func(t *testing.T) {
				f := platformtest.New(t, m.opts...)
				path := lockPath(f)
				st.setup(t, f, path)
				before := listing(t, f.Dir)
				for range 3 {
					held, err := IsHeld(context.Background(), f.Platform, path)
					if err != nil || held != st.held {
						t.Fatalf("IsHeld = %v, %v; want %v", held, err, st.held)
					}
				}
				if after := listing(t, f.Dir); !equalListing(before, after) {
					t.Errorf("IsHeld changed the directory from %v to %v", before, after)
				}
			})
		}
	}
}

func TestIsHeldLeavesDeadHolderFile(t *testing.T) {
	f := newFileFake(t)
	path := lockPath(f)
	dead := f.Processes.Start()
	writeStamp(t, path, dead)
	f.Processes.Kill(dead.PID)
	f.Processes.Reap(dead.PID)
	before := listing(t, f.Dir)
	if held, err := IsHeld(context.Background(), f.Platform, path); err != nil || held {
		t.Fatalf("IsHeld over a dead holder's file = %v, %v; want false", held, err)
	}
	if after := listing(t, f.Dir); !equalListing(before, after) {
		t.Errorf("IsHeld changed the directory from %v to %v", before, after)
	}
	if got := readStamp(t, path); got != dead {
		t.Errorf("lock file holds %s, want the dead holder's %s left for the next acquisition", got, dead)
	}
}

func TestIsHeldInProcessWithoutOpeningSQLite(t *testing.T) {
	f := platformtest.New(t)
	path := lockPath(f)
	c := newCountingSQLite()
	p := withSQLite(f, c)

	// A task that holds the lock.
	l := mustAcquire(t, p, path)
	opens := c.opens.Load()
	if held, err := IsHeld(context.Background(), p, path); err != nil || !held {
		t.Errorf("IsHeld with a holder in this process = %v, %v; want true", held, err)
	}
	if n := c.opens.Load(); n != opens {
		t.Errorf("IsHeld opened SQLite %d times behind this process's holder", n-opens)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}

	// A task that attempts it (backing off against another process).
	theirs := mustAcquire(t, otherProcess(f, f.Processes.Start()), path)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := goAcquire(ctx, p, path, Options{Wait: true})
	waitTimers(t, f.Clock, 1)
	opens = c.opens.Load()
	if held, err := IsHeld(context.Background(), p, path); err != nil || !held {
		t.Errorf("IsHeld with an attempt in this process = %v, %v; want true", held, err)
	}
	if n := c.opens.Load(); n != opens {
		t.Errorf("IsHeld opened SQLite %d times behind this process's attempt", n-opens)
	}
	cancel()
	if r := receive(t, ch); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled attempt = %v, %v", r.lock, r.err)
	}
	if err := theirs.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestIsHeldThroughAnotherSQLiteValue(t *testing.T) {
	f := platformtest.New(t)
	path := lockPath(f)
	l := mustAcquire(t, withSQLite(f, newCountingSQLite()), path)
	if held, err := IsHeld(context.Background(), f.Platform, path); err != nil || !held {
		t.Errorf("IsHeld while another SQLite value holds = %v, %v; want true", held, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if held, err := IsHeld(context.Background(), f.Platform, path); err != nil || held {
		t.Errorf("IsHeld after Release = %v, %v; want false", held, err)
	}
}

// TestIsHeldOneAttemptNoIdentity: with SQLite, each IsHeld makes one
// attempt (one open, with no busy timeout) and never reads the process's
// identity, whether the lock is held or free.
func TestIsHeldOneAttemptNoIdentity(t *testing.T) {
	f := platformtest.New(t)
	path := lockPath(f)
	sqlite := newCountingSQLite()
	self := &platformtest.CountingProcess{Process: f.Platform.Process}
	p := *withSQLite(f, sqlite)
	p.Process = self
	l := mustAcquire(t, otherProcess(f, f.Processes.Start()), path)
	for i, want := range []bool{true, false} {
		if i == 1 {
			if err := l.Release(); err != nil {
				t.Fatal(err)
			}
		}
		if held, err := IsHeld(context.Background(), &p, path); err != nil || held != want {
			t.Fatalf("IsHeld = %v, %v; want %v", held, err, want)
		}
		opts := sqlite.openOptions()
		if len(opts) != i+1 || opts[i].BusyTimeout != 0 {
			t.Fatalf("after %d checks, opens with options %+v; want one open each, with no busy timeout", i+1, opts)
		}
	}
	if n := self.SelfCalls.Load(); n != 0 {
		t.Fatalf("IsHeld read the process identity %d times", n)
	}
}

func TestIsHeldDoneContext(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := platformtest.New(t, m.opts...)
			c := newCountingSQLite()
			p := f.Platform
			if p.SQLite != nil {
				p = withSQLite(f, c)
			}
			defer f.FS.SetFault(nil)
			f.FS.SetFault(func(platformtest.Op, string) error { return errTouched })
			cause := errors.New("deadline of the caller")
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(cause)
			if held, err := IsHeld(ctx, p, lockPath(f)); !errors.Is(err, cause) || held {
				t.Errorf("IsHeld with a done context = %v, %v; want false and its cause", held, err)
			}
			if r, err := Inspect(ctx, p, lockPath(f)); !errors.Is(err, cause) || r != (Report{}) {
				t.Errorf("Inspect with a done context = %+v, %v; want its cause", r, err)
			}
			if n := c.opens.Load(); n != 0 {
				t.Errorf("IsHeld with a done context opened SQLite %d times", n)
			}
		})
	}
}

func TestIsHeldConcurrentChecksSeeFreeLockFree(t *testing.T) {
	const checkers = 8
	f := platformtest.New(t)
	path := lockPath(f)
	if err := mustAcquire(t, f.Platform, path).Release(); err != nil { // the database exists, free
		t.Fatal(err)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, checkers)
	for i := range checkers {
		p := withSQLite(f, newCountingSQLite()) // as if from other processes
		wg.Go(func() {
			<-start
			for range 20 {
				held, err := IsHeld(context.Background(), p, path)
				if err != nil || held {
					errs <- fmt.Errorf("checker %d: IsHeld of a free lock = %v, %v", i, held, err)
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// An Acquire whose first attempt meets a check in progress (a raw read
// transaction holds a shared lock on the database) still gets the free
// lock: the first attempt waits the check out.
func TestAcquireWaitsOutConcurrentCheck(t *testing.T) {
	f := platformtest.New(t)
	path := lockPath(f)
	if err := mustAcquire(t, f.Platform, path).Release(); err != nil {
		t.Fatal(err)
	}
	tx := readTransaction(t, path)
	// The check ends while the Acquire's first attempt is under way: at
	// its second open, so that the first try has met the shared lock.
	c := newCountingSQLite()
	var once sync.Once
	var commitErr error
	c.onOpen = func(n int64) {
		if n == 2 {
			once.Do(func() { commitErr = tx.Commit() })
		}
	}
	l, err := Acquire(context.Background(), withSQLite(f, c), path, Options{})
	if commitErr != nil {
		t.Fatal(commitErr)
	}
	if err != nil {
		t.Fatalf("Acquire meeting a concurrent check: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if got := c.opens.Load(); got < 2 {
		t.Errorf("the first try got the lock through a reader's shared lock (%d opens)", got)
	}
}

func TestInspectReportsHolder(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := platformtest.New(t, m.opts...)
			path := lockPath(f)
			ctx := context.Background()
			if r, err := Inspect(ctx, f.Platform, path); err != nil || r != (Report{}) {
				t.Errorf("Inspect of a free lock = %+v, %v; want not held", r, err)
			}
			theirID := f.Processes.Start()
			theirs := mustAcquire(t, otherProcess(f, theirID), path)
			r, err := Inspect(ctx, f.Platform, path)
			if err != nil || !r.Held || !sameHolder(r.Holder, &theirID) {
				t.Errorf("Inspect with another process holding = {%v %s}, %v; want held by %s", r.Held, describe(r.Holder), err, theirID)
			}
			if err := theirs.Release(); err != nil {
				t.Fatal(err)
			}
			mine := mustAcquire(t, f.Platform, path)
			r, err = Inspect(ctx, f.Platform, path)
			if err != nil || !r.Held || !sameHolder(r.Holder, mine.Holder()) {
				t.Errorf("Inspect with this process holding = {%v %s}, %v; want held by %s", r.Held, describe(r.Holder), err, describe(mine.Holder()))
			}
			if err := mine.Release(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A retry of a waiting Acquire has no busy timeout: one that meets a
// check finds the free lock busy, backs off again, and gets the lock on
// the retry after.
func TestAcquireWaitRetryMeetingCheckBacksOff(t *testing.T) {
	f := platformtest.New(t)
	path := lockPath(f)
	theirs := mustAcquire(t, otherProcess(f, f.Processes.Start()), path)
	ch := goAcquire(context.Background(), f.Platform, path, Options{Wait: true})
	waitTimers(t, f.Clock, 1)
	if err := theirs.Release(); err != nil {
		t.Fatal(err)
	}
	tx := readTransaction(t, path)
	f.Clock.Advance(maxBackoff) // the retry meets the check...
	waitTimers(t, f.Clock, 1)   // ...and backs off again
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(maxBackoff)
	r := receive(t, ch)
	if r.err != nil {
		t.Fatalf("Acquire after the check ended: %v", r.err)
	}
	if err := r.lock.Release(); err != nil {
		t.Fatal(err)
	}
}

// readTransaction opens a read transaction on the database at path, as a
// check in progress holds it: a shared lock until it commits.
func readTransaction(t *testing.T, path string) *sql.Tx {
	t.Helper()
	reader, err := sqlite.Opener().Open(path, platform.SQLiteOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Close() })
	tx, err := reader.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return tx
}
