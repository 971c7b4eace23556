package plock

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
)

// errTouched is what a fake FS answers to any use of the lock's files, so
// that a call that must not touch them fails if it does.
var errTouched = errors.New("the lock's files were touched")

// forbidLockFiles fails every operation of f's FS but resolving a
// directory: from then on, only a call that never reaches the lock
// (answered by this process's turns) succeeds.
func forbidLockFiles(f *platformtest.Fake) {
	f.FS.SetFault(func(op platformtest.Op, _ string) error {
		if op == platformtest.OpEvalSymlinks {
			return nil
		}
		return errTouched
	})
}

func TestTurnsServeWaitersInArrivalOrder(t *testing.T) {
	const waiters = 20
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := platformtest.New(t, m.opts...)
			path := lockPath(f)
			key := keyOf(t, f.Platform, path)
			first := mustAcquire(t, f.Platform, path)

			order := make(chan int, waiters)
			errs := make(chan error, waiters)
			var wg sync.WaitGroup
			defer wg.Wait()
			for i := range waiters {
				wg.Go(func() {
					l, err := Acquire(context.Background(), f.Platform, path, Options{Wait: true})
					if err != nil {
						errs <- fmt.Errorf("waiter %d: %w", i, err)
						return
					}
					order <- i // before Release: the next cannot hold the lock yet
					if err := l.Release(); err != nil {
						errs <- fmt.Errorf("waiter %d: %w", i, err)
					}
				})
				waitTurns(t, fmt.Sprintf("waiter %d queued", i), func() bool { return len(waitingLocked(key)) == i+1 })
			}
			if err := first.Release(); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			close(order)
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			var got []int
			for i := range order {
				got = append(got, i)
			}
			if want := seq(waiters); !slices.Equal(got, want) {
				t.Errorf("waiters served in order %v, want arrival order %v", got, want)
			}
		})
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestTurnsBusyWithoutWaitIsHeldAtOnce(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := platformtest.New(t, m.opts...)
			path := lockPath(f)
			key := keyOf(t, f.Platform, path)
			first := mustAcquire(t, f.Platform, path)
			defer f.FS.SetFault(nil)
			forbidLockFiles(f)

			held := mustHeld(t, f.Platform, path)
			if !sameHolder(held.Holder, first.Holder()) {
				t.Errorf("HeldError.Holder = %s, want this process %s", describe(held.Holder), describe(first.Holder()))
			}
			turns.mu.Lock()
			q := turns.queues[key]
			owner, queued := q.owner, len(q.waiting)
			turns.mu.Unlock()
			if owner != first.task || queued != 0 {
				t.Errorf("a call that gave up changed the turns: owner %p (want %p), %d waiting", owner, first.task, queued)
			}
			f.FS.SetFault(nil)
			if err := first.Release(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestTurnsCancelLeavesOthersInOrder(t *testing.T) {
	const waiters, cancelled = 5, 2
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := platformtest.New(t, m.opts...)
			path := lockPath(f)
			key := keyOf(t, f.Platform, path)
			first := mustAcquire(t, f.Platform, path)

			cause := errors.New("caller went away")
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			order := make(chan int, waiters)
			results := make([]chan error, waiters)
			tasks := make([]*task, waiters)
			for i := range waiters {
				wctx := context.Background()
				if i == cancelled {
					wctx = ctx
				}
				results[i] = make(chan error, 1)
				go func() {
					l, err := Acquire(wctx, f.Platform, path, Options{Wait: true})
					if err == nil {
						order <- i
						err = l.Release()
					}
					results[i] <- err
				}()
				waitTurns(t, fmt.Sprintf("waiter %d queued", i), func() bool { return len(waitingLocked(key)) == i+1 })
				tasks[i] = waiting(key)[i]
			}

			cancel(cause)
			if err := <-results[cancelled]; !errors.Is(err, cause) {
				t.Fatalf("cancelled waiter returned %v, want its cause %v", err, cause)
			}
			want := slices.Delete(slices.Clone(tasks), cancelled, cancelled+1)
			if got := waiting(key); !slices.Equal(got, want) {
				t.Errorf("queue after the cancel = %p, want %p", got, want)
			}
			if err := first.Release(); err != nil {
				t.Fatal(err)
			}
			for i, ch := range results {
				if i == cancelled {
					continue
				}
				if err := <-ch; err != nil {
					t.Errorf("waiter %d: %v", i, err)
				}
			}
			close(order)
			var got []int
			for i := range order {
				got = append(got, i)
			}
			if want := []int{0, 1, 3, 4}; !slices.Equal(got, want) {
				t.Errorf("served in order %v, want %v", got, want)
			}
		})
	}
}

func TestTurnsSharedAcrossSpellings(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := platformtest.New(t, m.opts...)
			real := filepath.Join(f.Dir, "real")
			link := filepath.Join(f.Dir, "link")
			if err := os.Mkdir(real, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, link); err != nil {
				t.Skipf("no symlinks here: %v", err)
			}
			resolvedDir, err := filepath.EvalSymlinks(real)
			if err != nil {
				t.Fatal(err)
			}
			c := newCountingSQLite()
			p := f.Platform
			if p.SQLite != nil {
				p = withSQLite(f, c)
			}
			first := mustAcquire(t, p, filepath.Join(real, "x.lock"))
			if want := filepath.Join(resolvedDir, "x.lock"); first.Path() != want {
				t.Errorf("Path() = %q, want %q", first.Path(), want)
			}
			opens := c.opens.Load()
			defer f.FS.SetFault(nil)
			forbidLockFiles(f)

			spellings := []struct{ name, dir, path string }{
				{"symlinked directory", "", filepath.Join(link, "x.lock")},
				{"unclean", "", filepath.Join(real, ".", "sub", "..", "x.lock")},
				{"relative", real, "x.lock"},
				{"relative through the symlink", link, "x.lock"},
				{"relative parent", filepath.Join(real), filepath.Join("..", "link", "x.lock")},
			}
			for _, s := range spellings {
				t.Run(s.name, func(t *testing.T) {
					if s.dir != "" {
						t.Chdir(s.dir)
					}
					held := mustHeld(t, p, s.path)
					if held.Path != first.Path() {
						t.Errorf("HeldError.Path = %q, want %q", held.Path, first.Path())
					}
					if ok, err := IsHeld(context.Background(), p, s.path); err != nil || !ok {
						t.Errorf("IsHeld(%q) = %v, %v; want true", s.path, ok, err)
					}
				})
			}
			if n := c.opens.Load(); n != opens {
				t.Errorf("SQLite opened %d times: some spelling did not share the turns", n-opens)
			}
			f.FS.SetFault(nil)
			if err := first.Release(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestTurnsRegistryEmptyAfterTasksEnd(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := platformtest.New(t, m.opts...)
			if n := registrySize(); n != 0 {
				t.Fatalf("registry holds %d queues before the test", n)
			}
			outcomes := []struct {
				name string
				run  func(t *testing.T, p *platform.Platform, path string)
			}{
				{"held and released", func(t *testing.T, p *platform.Platform, path string) {
					if err := mustAcquire(t, p, path).Release(); err != nil {
						t.Fatal(err)
					}
				}},
				{"gave up behind a task", func(t *testing.T, p *platform.Platform, path string) {
					l := mustAcquire(t, p, path)
					mustHeld(t, p, path)
					if err := l.Release(); err != nil {
						t.Fatal(err)
					}
				}},
				{"cancelled in the queue", func(t *testing.T, p *platform.Platform, path string) {
					l := mustAcquire(t, p, path)
					key := keyOf(t, p, path)
					ctx, cancel := context.WithCancel(context.Background())
					ch := goAcquire(ctx, p, path, Options{Wait: true})
					waitTurns(t, "queued", func() bool { return len(waitingLocked(key)) == 1 })
					cancel()
					if r := receive(t, ch); !errors.Is(r.err, context.Canceled) {
						t.Fatalf("cancelled = %v, %v", r.lock, r.err)
					}
					if err := l.Release(); err != nil {
						t.Fatal(err)
					}
				}},
				{"busy against another process", func(t *testing.T, p *platform.Platform, path string) {
					theirs := mustAcquire(t, otherProcess(f, f.Processes.Start()), path)
					mustHeld(t, p, path)
					if err := theirs.Release(); err != nil {
						t.Fatal(err)
					}
				}},
				{"failed attempt", func(t *testing.T, p *platform.Platform, path string) {
					if err := os.WriteFile(path, []byte("not a lock"), 0o644); err != nil {
						t.Fatal(err)
					}
					if l, err := Acquire(context.Background(), p, path, Options{}); err == nil {
						l.Release()
						t.Fatal("Acquire over garbage succeeded")
					}
				}},
			}
			for i := range 50 {
				o := outcomes[i%len(outcomes)]
				path := filepath.Join(f.Dir, fmt.Sprintf("%d.lock", i))
				o.run(t, f.Platform, path)
				if n := registrySize(); n != 0 {
					t.Fatalf("after %q at %s the registry holds %d queues, want 0", o.name, path, n)
				}
			}
		})
	}
}

// funcSQLite is a SQLite whose values are not comparable (it holds a
// func), as a user's implementation may well be.
type funcSQLite struct {
	open func(string, platform.SQLiteOptions) (*sql.DB, error)
}

func (s funcSQLite) Open(path string, opts platform.SQLiteOptions) (*sql.DB, error) {
	return s.open(path, opts)
}

// wrappedSQLite is comparable as a type, but not when it wraps a value
// that is not.
type wrappedSQLite struct{ platform.SQLite }

func TestTurnsWithIncomparableSQLite(t *testing.T) {
	c := newCountingSQLite()
	plain := funcSQLite{c.Open}
	tests := []struct {
		name string
		s    platform.SQLite
	}{
		{"func field", plain},
		{"wrapped", wrappedSQLite{plain}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := platformtest.New(t)
			p := withSQLite(f, tt.s)
			path := lockPath(f)
			var first *Lock
			func() {
				defer func() {
					if v := recover(); v != nil {
						t.Fatalf("Acquire through a SQLite of type %T panicked: %v", tt.s, v)
					}
				}()
				first = mustAcquire(t, p, path)
			}()
			opens := c.opens.Load()
			mustHeld(t, p, path)
			if n := c.opens.Load(); n != opens {
				t.Errorf("a second task of one platform opened SQLite %d times behind its holder", n-opens)
			}
			if err := first.Release(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Many tasks acquire one lock, with and without Wait, their contexts
// cancelled at racing moments: at most one holds at a time, each call
// returns the lock, a HeldError or its cause, and no queue is left.
func TestTurnsCancelStorm(t *testing.T) {
	const tasks, rounds = 8, 25
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f := platformtest.New(t, m.opts...)
			path := lockPath(f)
			cause := errors.New("storm")
			var holders atomic.Int32
			var wg sync.WaitGroup
			errs := make(chan error, tasks*rounds)
			for i := range tasks {
				wg.Go(func() {
					for r := range rounds {
						ctx, cancel := context.WithCancelCause(context.Background())
						if (i+r)%2 == 0 {
							wg.Go(func() { cancel(cause) }) // races the call
						}
						l, err := Acquire(ctx, f.Platform, path, Options{Wait: (i+r)%3 != 0})
						var held *HeldError
						switch {
						case err == nil:
							if n := holders.Add(1); n != 1 {
								errs <- fmt.Errorf("task %d round %d: %d holders at once", i, r, n)
							}
							holders.Add(-1)
							if err := l.Release(); err != nil {
								errs <- err
							}
						case errors.Is(err, cause), errors.As(err, &held):
						default:
							errs <- fmt.Errorf("task %d round %d: %w", i, r, err)
						}
						cancel(nil)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if n := registrySize(); n != 0 {
				t.Errorf("registry holds %d queues after the storm", n)
			}
		})
	}
}

// Openers that are not comparable share turns by type; comparable ones
// by value.
func TestTurnKeyOfIncomparableOpeners(t *testing.T) {
	c := newCountingSQLite()
	a, b := funcSQLite{c.Open}, funcSQLite{c.Open}
	if newTurnKey(a, "/l") != newTurnKey(b, "/l") {
		t.Error("two openers of one incomparable type do not share turns")
	}
	if newTurnKey(a, "/l") == newTurnKey(wrappedSQLite{a}, "/l") {
		t.Error("openers of two incomparable types share turns")
	}
	if newTurnKey(a, "/l") == newTurnKey(a, "/m") {
		t.Error("two paths share turns")
	}
	if x, y := new(int), new(int); newTurnKey(x, "/l") == newTurnKey(y, "/l") {
		t.Error("two comparable openers of one type share turns")
	}
}
