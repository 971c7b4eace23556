package plock

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
)

func newFileFake(t *testing.T) *platformtest.Fake {
	return platformtest.New(t, platformtest.WithoutSQLite())
}

func TestLockFileHoldsIdentity(t *testing.T) {
	f := newFileFake(t)
	path := lockPath(f)
	l := mustAcquire(t, f.Platform, path)
	id := self(t, f)
	if got := readStamp(t, path); got != id {
		t.Errorf("lock file holds %s, want %s", got, id)
	}
	if !sameHolder(l.Holder(), &id) {
		t.Errorf("Holder() = %s, want %s", describe(l.Holder()), id)
	}
	held := mustHeld(t, otherProcess(f, f.Processes.Start()), path)
	if !sameHolder(held.Holder, &id) {
		t.Errorf("another process's HeldError.Holder = %s, want %s", describe(held.Holder), id)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if exists(t, path) {
		t.Errorf("lock file left after Release")
	}
}

func TestLockFileDeadHolderReclaimed(t *testing.T) {
	tests := []struct {
		name string
		fate func(p *platformtest.Processes, pid int) // what befalls the holder
		dead bool
	}{
		{"killed and reaped", func(p *platformtest.Processes, pid int) { p.Kill(pid); p.Reap(pid) }, true},
		{"zombie", func(p *platformtest.Processes, pid int) { p.Kill(pid) }, true},
		{"pid reused", func(p *platformtest.Processes, pid int) { p.Kill(pid); p.Reap(pid); p.Reuse(pid) }, true},
		{"alive", func(*platformtest.Processes, int) {}, false},
		{"hidden, may not be signalled", func(p *platformtest.Processes, pid int) { p.Hide(pid, true) }, false},
		{"hidden, unknown", func(p *platformtest.Processes, pid int) { p.Hide(pid, false) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFileFake(t)
			path := lockPath(f)
			holder := f.Processes.Start()
			// The holder's Lock is never released before the fate: a dead
			// process releases nothing. (The cleanup then finds another
			// stamp in the file, or the same live one, and ends its turn.)
			mustAcquire(t, otherProcess(f, holder), path)
			tt.fate(f.Processes, holder.PID)

			l, err := Acquire(context.Background(), f.Platform, path, Options{})
			if !tt.dead {
				var held *HeldError
				if !errors.As(err, &held) || !sameHolder(held.Holder, &holder) {
					t.Fatalf("Acquire over a live holder = %v, %v; want HeldError naming %s", l, err, holder)
				}
				if got := readStamp(t, path); got != holder {
					t.Errorf("a live holder's lock file now holds %s", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Acquire over a dead holder's lock file: %v", err)
			}
			defer l.Release()
			if got, want := readStamp(t, path), self(t, f); got != want {
				t.Errorf("reclaimed lock file holds %s, want %s", got, want)
			}
		})
	}
}

func TestLockFileEmptyHeldFor30Seconds(t *testing.T) {
	for name, content := range map[string]string{"empty": "", "blank": " \n"} {
		t.Run(name, func(t *testing.T) {
			f := newFileFake(t)
			path := lockPath(f)
			other := otherProcess(f, f.Processes.Start())
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			created := f.Clock.Now().Add(-29 * time.Second)
			if err := os.Chtimes(path, created, created); err != nil {
				t.Fatal(err)
			}
			if held := mustHeld(t, f.Platform, path); held.Holder != nil {
				t.Errorf("an empty lock file's HeldError.Holder = %s, want nil", held.Holder)
			}
			if held, err := IsHeld(context.Background(), other, path); err != nil || !held {
				t.Errorf("IsHeld of a fresh empty lock file = %v, %v; want true", held, err)
			}
			f.Clock.Advance(2 * time.Second) // 31 s old
			if held, err := IsHeld(context.Background(), other, path); err != nil || held {
				t.Errorf("IsHeld of a stale empty lock file = %v, %v; want false", held, err)
			}
			l := mustAcquire(t, f.Platform, path)
			if got, want := readStamp(t, path), self(t, f); got != want {
				t.Errorf("reclaimed lock file holds %s, want %s", got, want)
			}
			if err := l.Release(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestLockFileGarbageIsStampError(t *testing.T) {
	tests := []struct{ name, content string }{
		{"not JSON", "pid=42\n"},
		{"no fields", "{}"},
		{"no start time", `{"host":"h","bootId":"boot-1","pid":1000}`},
		{"wrong type", `{"host":"h","bootId":"boot-1","pid":"1000","startTime":100}`},
		{"trailing data", `{"host":"h","bootId":"boot-1","pid":1000,"startTime":100}}`},
		{"binary", "\x00\x01\x02"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFileFake(t)
			path := lockPath(f)
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			before := listing(t, f.Dir)
			for _, opts := range []Options{{}, {Wait: true}} {
				l, err := Acquire(context.Background(), f.Platform, path, opts)
				var se *StampError
				if !errors.As(err, &se) {
					if l != nil {
						l.Release()
					}
					t.Fatalf("Acquire(%+v) over garbage = %v, %v; want a *StampError", opts, l, err)
				}
				if se.Path != path {
					t.Errorf("StampError.Path = %q, want %q", se.Path, path)
				}
			}
			if data, err := os.ReadFile(path); err != nil || !bytes.Equal(data, []byte(tt.content)) {
				t.Errorf("garbage lock file changed to %q, %v", data, err)
			}
			if after := listing(t, f.Dir); !equalListing(before, after) {
				t.Errorf("directory changed from %v to %v", before, after)
			}
		})
	}
}

func equalListing(a, b []entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || a[i].size != b[i].size || !a[i].modTime.Equal(b[i].modTime) || a[i].mode != b[i].mode {
			return false
		}
	}
	return true
}

func TestLockFileNeedsIdentity(t *testing.T) {
	f := newFileFake(t)
	path := lockPath(f)
	denied := errors.New("sandbox denies sysctl")
	f.Processes.FailSelf(denied)
	for _, opts := range []Options{{}, {Wait: true}} {
		l, err := Acquire(context.Background(), f.Platform, path, opts)
		if !errors.Is(err, denied) {
			t.Fatalf("Acquire(%+v) without identity = %v, %v; want the error reading it", opts, l, err)
		}
	}
	if after := listing(t, f.Dir); len(after) != 0 {
		t.Errorf("Acquire without identity created %v", after)
	}
}

func TestLockFileRewrittenBySomeoneElseNotRemoved(t *testing.T) {
	f := newFileFake(t)
	path := lockPath(f)
	l := mustAcquire(t, f.Platform, path)
	intruder := f.Processes.Start()
	writeStamp(t, path, intruder)
	if err := l.Release(); err != nil {
		t.Fatalf("Release of a rewritten lock file: %v", err)
	}
	if got := readStamp(t, path); got != intruder {
		t.Errorf("after Release the lock file holds %s, want the intruder's %s", got, intruder)
	}
}

func TestLockFileConcurrentReclaimers(t *testing.T) {
	const reclaimers = 8
	f := newFileFake(t)
	path := lockPath(f)
	dead := f.Processes.Start()
	writeStamp(t, path, dead)
	f.Processes.Kill(dead.PID)
	f.Processes.Reap(dead.PID)

	start := make(chan struct{})
	var wg sync.WaitGroup
	ids := make([]platform.Identity, reclaimers)
	locks := make([]*Lock, reclaimers)
	errs := make([]error, reclaimers)
	for i := range reclaimers {
		ids[i] = f.Processes.Start()
		p := otherProcess(f, ids[i])
		wg.Go(func() {
			<-start
			locks[i], errs[i] = Acquire(context.Background(), p, path, Options{})
		})
	}
	close(start)
	wg.Wait()

	var winners []int
	for i, err := range errs {
		var held *HeldError
		switch {
		case err == nil:
			winners = append(winners, i)
			defer locks[i].Release()
		case !errors.As(err, &held):
			t.Errorf("reclaimer %d: %v; want the lock or a HeldError", i, err)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d reclaimers hold the lock (%v), want exactly 1", len(winners), winners)
	}
	if got, want := readStamp(t, path), ids[winners[0]]; got != want {
		t.Errorf("lock file holds %s, want the winner's %s", got, want)
	}
}

// A lock file that cannot be created is the error, and the turn is free
// for the next call.
func TestLockFileCreateFailure(t *testing.T) {
	f := newFileFake(t)
	path := lockPath(f)
	readOnly := errors.New("read-only file system")
	f.FS.SetFault(func(op platformtest.Op, _ string) error {
		if op == platformtest.OpCreateExclusive {
			return readOnly
		}
		return nil
	})
	l, err := Acquire(context.Background(), f.Platform, path, Options{Wait: true})
	if !errors.Is(err, readOnly) {
		if l != nil {
			l.Release()
		}
		t.Fatalf("Acquire with a failing create = %v, %v; want the create's error", l, err)
	}
	f.FS.SetFault(nil)
	if err := mustAcquire(t, f.Platform, path).Release(); err != nil {
		t.Fatal(err)
	}
}

// Two processes judge one dead holder's file; the second to get the
// reclaim guard must find the first's new lock there and leave it.
func TestLockFileReclaimRechecksUnderGuard(t *testing.T) {
	f := newFileFake(t)
	path := lockPath(f)
	dead := f.Processes.Start()
	writeStamp(t, path, dead)
	f.Processes.Kill(dead.PID)
	f.Processes.Reap(dead.PID)

	// When this process reaches the reclaim guard, the other process
	// reclaims first and takes the lock.
	otherID := f.Processes.Start()
	other := otherProcess(f, otherID)
	var fired atomic.Bool
	var theirs *Lock
	var theirErr error
	f.FS.SetFault(func(op platformtest.Op, _ string) error {
		if op == platformtest.OpTryLock && !fired.Swap(true) {
			theirs, theirErr = Acquire(context.Background(), other, path, Options{})
		}
		return nil
	})
	defer f.FS.SetFault(nil)

	l, err := Acquire(context.Background(), f.Platform, path, Options{})
	if theirErr != nil {
		t.Fatalf("the other process's reclaim: %v", theirErr)
	}
	defer theirs.Release()
	if err == nil {
		l.Release()
		t.Fatal("both reclaimers hold the lock")
	}
	var held *HeldError
	if !errors.As(err, &held) || !sameHolder(held.Holder, &otherID) {
		t.Fatalf("late reclaimer got %v; want a HeldError naming %s", err, otherID)
	}
	if got := readStamp(t, path); got != otherID {
		t.Errorf("lock file holds %s, want the first reclaimer's %s", got, otherID)
	}
}
