package lease_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rivus/collab/internal/childproc"
	"time"

	"github.com/rivus/collab/lease/file"
	"github.com/rivus/collab/lease/sqlite"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
	platformsqlite "github.com/rivus/collab/platform/sqlite"
)

// The environment of a re-executed test binary: childEnv names the
// repository kind, childPathEnv its database or directory, childKeyEnv
// the key whose fence the child takes.
const (
	childEnv     = "COLLAB_LEASE_TEST_CHILD"
	childPathEnv = "COLLAB_LEASE_TEST_PATH"
	childKeyEnv  = "COLLAB_LEASE_TEST_KEY"
)

// repoKinds are the repositories whose fences exclude other processes.
var repoKinds = []string{"sqlite", "file"}

// openKind opens a repository of kind at path on p.
func openKind(p *platform.Platform, kind, path string) (store.Repository, func() error, error) {
	switch kind {
	case "sqlite":
		r, err := sqlite.Open(p, path)
		if err != nil {
			return nil, nil, err
		}
		return r, r.Close, nil
	case "file":
		r, err := file.Open(p, path)
		return r, func() error { return nil }, err
	}
	return nil, nil, fmt.Errorf("unknown repository kind %q", kind)
}

// runChild is the body of a child: it takes the fence, says "held", and
// keeps it until its stdin closes or it is killed.
func runChild(kind string) error {
	r, closeRepo, err := openKind(platformsqlite.OS(), kind, os.Getenv(childPathEnv))
	if err != nil {
		return err
	}
	defer closeRepo()
	unlock, err := r.Fence(context.Background(), os.Getenv(childKeyEnv))
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := fmt.Println("held"); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

// startChild starts a child holding key's fence in the repository of
// kind at path, and returns once it holds it.
func startChild(t *testing.T, kind, path, key string) *childproc.Child {
	t.Helper()
	c := childproc.Start(t, childEnv+"="+kind, childPathEnv+"="+path, childKeyEnv+"="+key)
	c.Expect(t, "held")
	return c
}

// kill kills the child with SIGKILL, so that it cannot release anything
// itself, and reaps it: then the kernel has dropped its locks.
func kill(t *testing.T, c *childproc.Child) {
	t.Helper()
	if err := c.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := c.Wait(); !errors.As(err, &exit) {
		t.Fatalf("killed child exited with %v, want a kill", err)
	}
}

// repoPath returns where a repository of kind lives in dir.
func repoPath(dir, kind string) string {
	if kind == "sqlite" {
		return filepath.Join(dir, "leases.db")
	}
	return filepath.Join(dir, "leases")
}

// openFake opens a repository of kind in f's directory, on f's platform
// with its fake clock.
func openFake(t *testing.T, f *platformtest.Fake, kind string) store.Repository {
	t.Helper()
	r, closeRepo, err := openKind(f.Platform, kind, repoPath(f.Dir, kind))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := closeRepo(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// fenceResult is what a Fence call running in a goroutine returned.
type fenceResult struct {
	unlock func()
	err    error
}

// fenceAsync calls Fence in a goroutine and delivers its result.
func fenceAsync(ctx context.Context, r store.Repository, key string) <-chan fenceResult {
	done := make(chan fenceResult, 1)
	go func() {
		u, err := r.Fence(ctx, key)
		done <- fenceResult{u, err}
	}()
	return done
}

// wantWaiting waits until the Fence call behind done has found the fence
// held and armed its retry timer on the fake clock, and checks that it
// has not returned. The clock has no other timers, so an armed timer is
// the waiter's.
func wantWaiting(t *testing.T, clock *platformtest.Clock, done <-chan fenceResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	armed := make(chan error, 1)
	go func() { armed <- clock.WaitForTimers(ctx, 1) }()
	select {
	case err := <-armed:
		if err != nil {
			t.Fatalf("the waiter armed no retry timer: %v", err)
		}
	case res := <-done:
		t.Fatalf("Fence returned while the fence was held: %v", res.err)
	}
	select {
	case res := <-done:
		t.Fatalf("Fence returned while the fence was held: %v", res.err)
	default:
	}
}

// retryWait is more than the longest backoff between two attempts.
const retryWait = time.Second

// TestFenceHeldByAnotherProcess: a real second process holding a fence
// keeps this process's Fence waiting, attempt after attempt on the fake
// clock, until the child is killed with SIGKILL and the kernel drops its
// lock.
func TestFenceHeldByAnotherProcess(t *testing.T) {
	for _, kind := range repoKinds {
		t.Run(kind, func(t *testing.T) {
			f := platformtest.New(t)
			r := openFake(t, f, kind)
			c := startChild(t, kind, repoPath(f.Dir, kind), "task/42")
			done := fenceAsync(t.Context(), r, "task/42")
			for range 3 {
				wantWaiting(t, f.Clock, done)
				f.Clock.Advance(retryWait)
			}
			wantWaiting(t, f.Clock, done)
			kill(t, c)
			f.Clock.Advance(retryWait)
			res := <-done
			if res.err != nil {
				t.Fatalf("Fence after the holder died: %v", res.err)
			}
			res.unlock()
		})
	}
}

// TestFenceWaitEndsWithContext: a waiter polling another process's fence
// stops when its context ends, and leaves the fence to the next caller.
func TestFenceWaitEndsWithContext(t *testing.T) {
	for _, kind := range repoKinds {
		t.Run(kind, func(t *testing.T) {
			f := platformtest.New(t)
			r := openFake(t, f, kind)
			c := startChild(t, kind, repoPath(f.Dir, kind), "k")
			cause := errors.New("lease lost")
			ctx, cancel := context.WithCancelCause(t.Context())
			done := fenceAsync(ctx, r, "k")
			wantWaiting(t, f.Clock, done)
			cancel(cause)
			if res := <-done; !errors.Is(res.err, cause) || res.unlock != nil {
				t.Fatalf("Fence after its context ended = %v (unlock %v), want the cause", res.err, res.unlock != nil)
			}
			if n := f.Clock.Pending(); n != 0 {
				t.Fatalf("%d timers left pending after the wait ended", n)
			}
			kill(t, c)
			done = fenceAsync(t.Context(), r, "k")
			if res := <-done; res.err != nil {
				t.Fatalf("Fence after the holder died: %v", res.err)
			} else {
				res.unlock()
			}
		})
	}
}

// TestFenceSecondHandle: two repository handles in one process exclude
// each other through the lock file (each has its own in-process queue),
// and the waiter polls on the platform clock.
func TestFenceSecondHandle(t *testing.T) {
	for _, kind := range repoKinds {
		t.Run(kind, func(t *testing.T) {
			f := platformtest.New(t)
			a, b := openFake(t, f, kind), openFake(t, f, kind)
			unlock, err := a.Fence(t.Context(), "k")
			if err != nil {
				t.Fatal(err)
			}
			done := fenceAsync(t.Context(), b, "k")
			wantWaiting(t, f.Clock, done)
			f.Clock.Advance(retryWait)
			wantWaiting(t, f.Clock, done)
			unlock()
			f.Clock.Advance(retryWait)
			res := <-done
			if res.err != nil {
				t.Fatal(res.err)
			}
			res.unlock()
		})
	}
}
