package plock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivus/collab/platform/platformtest"
)

func TestSQLiteHolderStampWrittenAndRemovedOnRelease(t *testing.T) {
	f := platformtest.New(t)
	path := lockPath(f)
	stamp := path + holderSuffix
	l := mustAcquire(t, f.Platform, path)
	if got, want := readStamp(t, stamp), self(t, f); got != want {
		t.Errorf("%s holds %s, want %s", stamp, got, want)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if exists(t, stamp) {
		t.Errorf("%s left after Release", stamp)
	}
}

func TestSQLiteReleaseIsIdempotent(t *testing.T) {
	f := platformtest.New(t)
	path := lockPath(f)
	first := mustAcquire(t, f.Platform, path)
	for i := range 2 {
		if err := first.Release(); err != nil {
			t.Fatalf("Release #%d: %v", i+1, err)
		}
	}
	// A later Release of the old lock must not touch the next holder's.
	second := mustAcquire(t, f.Platform, path)
	if err := first.Release(); err != nil {
		t.Fatalf("Release of a released lock: %v", err)
	}
	if !exists(t, path+holderSuffix) {
		t.Errorf("a released lock's Release removed the next holder's stamp")
	}
	held, err := IsHeld(context.Background(), withSQLite(f, newCountingSQLite()), path)
	if err != nil || !held {
		t.Errorf("IsHeld through another SQLite value = %v, %v after a stale Release; want true", held, err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSQLiteHolderWithoutIdentity(t *testing.T) {
	tests := []struct {
		name     string
		oldStamp bool // a holder that died left its stamp
	}{
		{"no old stamp", false},
		{"dead holder's stamp", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := platformtest.New(t)
			path := lockPath(f)
			stamp := path + holderSuffix
			if tt.oldStamp {
				dead := f.Processes.Start()
				f.Processes.Kill(dead.PID)
				f.Processes.Reap(dead.PID)
				writeStamp(t, stamp, dead)
			}
			f.Processes.FailSelf(errors.New("sandbox denies /proc"))
			l, err := Acquire(context.Background(), f.Platform, path, Options{})
			if err != nil {
				t.Fatalf("Acquire without a readable identity: %v", err)
			}
			defer l.Release()
			if l.Holder() != nil {
				t.Errorf("Holder() = %s, want nil", l.Holder())
			}
			if exists(t, stamp) {
				t.Errorf("%s exists while held by a process without identity", stamp)
			}
			other := otherProcess(f, f.Processes.Start())
			if held := mustHeld(t, other, path); held.Holder != nil {
				t.Errorf("another process was told the holder is %s, want nil", held.Holder)
			}
			if err := l.Release(); err != nil {
				t.Fatal(err)
			}
			if exists(t, stamp) {
				t.Errorf("%s exists after Release", stamp)
			}
		})
	}
}

func TestSQLiteValuesMeetInSQLite(t *testing.T) {
	f := platformtest.New(t)
	path := lockPath(f)
	first := withSQLite(f, newCountingSQLite())
	secondSQLite := newCountingSQLite()
	secondID := f.Processes.Start()
	second := f.As(secondID)
	second.SQLite = secondSQLite

	l := mustAcquire(t, first, path)
	held := mustHeld(t, second, path)
	if want := self(t, f); !sameHolder(held.Holder, &want) {
		t.Errorf("HeldError.Holder = %s, want the stamp %s", describe(held.Holder), want)
	}
	if secondSQLite.opens.Load() == 0 {
		t.Errorf("the second SQLite value was never opened: the two met in this process's turns, not in SQLite")
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2 := mustAcquire(t, second, path)
	if got := readStamp(t, path+holderSuffix); got != secondID {
		t.Errorf("stamp after the second acquisition = %s, want %s", got, secondID)
	}
	if err := l2.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestSQLiteNeverOpenedAgainstOwnHolder(t *testing.T) {
	f := platformtest.New(t)
	path := lockPath(f)
	c := newCountingSQLite()
	p := withSQLite(f, c)
	l := mustAcquire(t, p, path)
	opens := c.opens.Load()

	if held := mustHeld(t, p, path); !sameHolder(held.Holder, l.Holder()) {
		t.Errorf("in-process HeldError.Holder = %s, want this process %s", describe(held.Holder), describe(l.Holder()))
	}
	if held, err := IsHeld(context.Background(), p, path); err != nil || !held {
		t.Errorf("IsHeld = %v, %v while a task of this process holds the lock", held, err)
	}
	if r, err := Inspect(context.Background(), p, path); err != nil || !r.Held || !sameHolder(r.Holder, l.Holder()) {
		t.Errorf("Inspect = %+v, %v; want held by %s", r, err, describe(l.Holder()))
	}
	key := keyOf(t, p, path)
	ch := goAcquire(context.Background(), p, path, Options{Wait: true})
	waitTurns(t, "the waiter queued", func() bool { return len(waitingLocked(key)) == 1 })
	if n := c.opens.Load(); n != opens {
		t.Fatalf("SQLite opened %d times behind this process's own holder", n-opens)
	}

	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	r := receive(t, ch)
	if r.err != nil {
		t.Fatalf("waiter after Release: %v", r.err)
	}
	if err := r.lock.Release(); err != nil {
		t.Fatal(err)
	}
	if n := c.opens.Load(); n != opens+1 {
		t.Errorf("the waiter opened SQLite %d times, want once", n-opens)
	}
}

// While a task of this process attempts the lock (backing off against
// another process), the others of this process stay out of SQLite too,
// and the turn passes when it gives up.
func TestSQLiteNeverOpenedBehindOwnAttempt(t *testing.T) {
	f := platformtest.New(t)
	path := lockPath(f)
	theirs := mustAcquire(t, otherProcess(f, f.Processes.Start()), path)
	c := newCountingSQLite()
	p := withSQLite(f, c)
	key := keyOf(t, p, path)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := goAcquire(ctx, p, path, Options{Wait: true})
	waitTimers(t, f.Clock, 1)
	opens := c.opens.Load()

	mustHeld(t, p, path)
	if held, err := IsHeld(context.Background(), p, path); err != nil || !held {
		t.Errorf("IsHeld = %v, %v while a task of this process attempts", held, err)
	}
	second := goAcquire(context.Background(), p, path, Options{Wait: true})
	waitTurns(t, "the second task queued", func() bool { return len(waitingLocked(key)) == 1 })
	if n := c.opens.Load(); n != opens {
		t.Fatalf("SQLite opened %d times behind this process's own attempt", n-opens)
	}

	// The other process lets go while the first still backs off (the fake
	// clock holds its timer), so the second, handed the turn when the first
	// gives up, finds the lock free on its first attempt.
	if err := theirs.Release(); err != nil {
		t.Fatal(err)
	}
	cancel()
	if r := receive(t, first); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled first = %v, %v", r.lock, r.err)
	}
	r := receive(t, second)
	if r.err != nil {
		t.Fatalf("second after the first gave up: %v", r.err)
	}
	if err := r.lock.Release(); err != nil {
		t.Fatal(err)
	}
	if c.opens.Load() == opens {
		t.Errorf("the second task never attempted after the first gave up")
	}
}

// A holder that cannot write its stamp keeps the lock, which it holds:
// the stamp is for diagnostics (another user may hold its name in a
// sticky directory, or the disk be full). The lock is held without a
// stamp, and free again once released.
func TestSQLiteStampWriteFailureKeepsTheLock(t *testing.T) {
	f := platformtest.New(t)
	path := lockPath(f)
	diskFull := errors.New("no space left on device")
	f.FS.SetFault(func(op platformtest.Op, name string) error {
		if op == platformtest.OpCreateExclusive && strings.HasSuffix(name, holderSuffix) {
			return diskFull
		}
		return nil
	})
	l, err := Acquire(context.Background(), f.Platform, path, Options{})
	if err != nil {
		t.Fatalf("Acquire with a failing stamp write = %v; want the lock", err)
	}
	if _, err := os.Lstat(path + holderSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a stamp whose write failed is there: %v", err)
	}
	f.FS.SetFault(nil)
	mustHeld(t, otherProcess(f, f.Processes.Start()), path)
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := mustAcquire(t, otherProcess(f, f.Processes.Start()), path).Release(); err != nil {
		t.Fatal(err)
	}
}

func TestSQLiteOddPathCharacters(t *testing.T) {
	for _, name := range []string{"with space.lock", "what?.lock", "hash#.lock", "per%20cent.lock", "semi;colon&amp.lock", "ünïcode.lock"} {
		t.Run(name, func(t *testing.T) {
			f := platformtest.New(t)
			path := filepath.Join(f.Dir, name)
			l := mustAcquire(t, f.Platform, path)
			if !exists(t, path) || !exists(t, path+holderSuffix) {
				t.Errorf("lock files not at %q: %v", path, listing(t, f.Dir))
			}
			if held, err := IsHeld(context.Background(), withSQLite(f, newCountingSQLite()), path); err != nil || !held {
				t.Errorf("IsHeld through another SQLite value = %v, %v; want true", held, err)
			}
			if err := l.Release(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
