package plock

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivus/collab/internal/lockbackend"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
	"github.com/rivus/collab/platform/sqlite"
)

// modes are the two ways of holding the lock across processes.
var modes = []struct {
	name string
	opts []platformtest.Option
}{
	{"sqlite", nil},
	{"file", []platformtest.Option{platformtest.WithoutSQLite()}},
}

// countingSQLite is a SQLite of its own (so callers through it share no
// turns with callers through any other value) that counts its opens.
type countingSQLite struct {
	base  platform.SQLite
	opens atomic.Int64
	// onOpen, if set, runs before each open with the open's number (1 for
	// the first); tests use it to act at a precise point of an attempt.
	onOpen func(n int64)

	mu      sync.Mutex
	options []platform.SQLiteOptions // of each open, in order
}

func newCountingSQLite() *countingSQLite {
	return &countingSQLite{base: sqlite.Opener()}
}

func (c *countingSQLite) Open(path string, opts platform.SQLiteOptions) (*sql.DB, error) {
	n := c.opens.Add(1)
	c.mu.Lock()
	c.options = append(c.options, opts)
	c.mu.Unlock()
	if c.onOpen != nil {
		c.onOpen(n)
	}
	return c.base.Open(path, opts)
}

// openOptions returns the options of every open so far.
func (c *countingSQLite) openOptions() []platform.SQLiteOptions {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]platform.SQLiteOptions(nil), c.options...)
}

// processFS is an FS of its own: a platform with it shares no turns with
// any other platform, as if it ran in another process.
type processFS struct{ platform.FS }

// otherProcess returns a platform that plays process id as another
// process would: same clock, files and process table as f, but Self is
// id, and its own SQLite value (or, without SQLite, its own FS value), so
// that it meets f's callers through the lock itself rather than through
// this process's turns. Fake.As alone would share f's turns.
func otherProcess(f *platformtest.Fake, id platform.Identity) *platform.Platform {
	p := f.As(id)
	p.FS = &processFS{p.FS}
	if p.SQLite != nil {
		p.SQLite = newCountingSQLite()
	}
	return p
}

// withSQLite returns a copy of f's platform that opens SQLite through s,
// so that it has turns of its own.
func withSQLite(f *platformtest.Fake, s platform.SQLite) *platform.Platform {
	p := *f.Platform
	p.SQLite = s
	return &p
}

// self is the identity of f's own process.
func self(t *testing.T, f *platformtest.Fake) platform.Identity {
	t.Helper()
	id, err := f.Processes.Self()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// mustAcquire takes the lock without waiting and fails the test if it
// cannot; the lock is released at the end of the test.
func mustAcquire(t *testing.T, p *platform.Platform, path string) *Lock {
	t.Helper()
	l, err := Acquire(context.Background(), p, path, Options{})
	if err != nil {
		t.Fatalf("Acquire %s: %v", path, err)
	}
	t.Cleanup(func() { _ = l.Release() })
	return l
}

// mustHeld acquires without waiting and requires a *HeldError, which
// matches ErrHeld.
func mustHeld(t *testing.T, p *platform.Platform, path string) *HeldError {
	t.Helper()
	l, err := Acquire(context.Background(), p, path, Options{})
	var held *HeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrHeld) {
		if l != nil {
			_ = l.Release()
		}
		t.Fatalf("Acquire %s = %v, %v; want a *HeldError", path, l, err)
	}
	return held
}

// sameHolder reports whether got names want (nil wants nil).
func sameHolder(got, want *platform.Identity) bool {
	if got == nil || want == nil {
		return got == want
	}
	return *got == *want
}

func describe(id *platform.Identity) string {
	if id == nil {
		return "<nil>"
	}
	return id.String()
}

// failAfter bounds a wait that should end on its own, so that a bug
// fails the test instead of hanging it; it is never what a test waits for.
const failAfter = 30 * time.Second

// waitTurns blocks until cond, evaluated with turns.mu held, is true. It
// takes turns.watch() before each check, so a step between the check and
// the wait is never missed.
func waitTurns(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(failAfter)
	defer deadline.Stop()
	for {
		changed := turns.watch()
		turns.mu.Lock()
		ok := cond()
		turns.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("no turn step brought %s within %v", what, failAfter)
		}
	}
}

// keyOf is the registry key of path as p's callers use it.
func keyOf(t *testing.T, p *platform.Platform, path string) turnKey {
	t.Helper()
	resolved, err := resolve(p.FS, path)
	if err != nil {
		t.Fatal(err)
	}
	return newTurnKey(opener(p), resolved)
}

// waitingLocked is the queue of key's waiting tasks, in order; turns.mu
// must be held.
func waitingLocked(key turnKey) []*task {
	if q := turns.queues[key]; q != nil {
		return slices.Clone(q.waiting)
	}
	return nil
}

// waiting returns the waiting tasks of key, in order.
func waiting(key turnKey) []*task {
	turns.mu.Lock()
	defer turns.mu.Unlock()
	return waitingLocked(key)
}

// waitTimers waits until the fake clock has n pending timers (a task
// backing off has armed its timer).
func waitTimers(t *testing.T, c *platformtest.Clock, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	if err := c.WaitForTimers(ctx, n); err != nil {
		t.Fatalf("waiting for %d timers: %v", n, err)
	}
}

// result is the outcome of an Acquire run in a goroutine.
type result struct {
	lock *Lock
	err  error
}

// goAcquire runs Acquire in a goroutine and returns where its result
// arrives.
func goAcquire(ctx context.Context, p *platform.Platform, path string, opts Options) <-chan result {
	ch := make(chan result, 1)
	go func() {
		l, err := Acquire(ctx, p, path, opts)
		ch <- result{l, err}
	}()
	return ch
}

// receive waits for a goroutine's result.
func receive(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(failAfter):
		t.Fatalf("Acquire did not return within %v", failAfter)
	}
	panic("unreachable")
}

// entry is what a directory listing records of one file.
type entry struct {
	name    string
	size    int64
	modTime time.Time
	mode    fs.FileMode
}

// listing records every file of dir, to show that a call wrote nothing.
func listing(t *testing.T, dir string) []entry {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []entry
	for _, de := range des {
		info, err := de.Info()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{de.Name(), info.Size(), info.ModTime(), info.Mode()})
	}
	return out
}

// writeStamp writes a lock file holding id, as its holder would have.
func writeStamp(t *testing.T, path string, id platform.Identity) {
	t.Helper()
	if err := os.WriteFile(path, id.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readStamp parses the identity in the file name.
func readStamp(t *testing.T, name string) platform.Identity {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	id, err := platform.ParseIdentity(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return id
}

func exists(t *testing.T, name string) bool {
	t.Helper()
	_, err := os.Stat(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

func lockPath(f *platformtest.Fake) string { return filepath.Join(f.Dir, "daemon.lock") }

// holderSuffix names the stamp beside a SQLite lock.
const holderSuffix = lockbackend.HolderSuffix
