package lease_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/rivus/collab/internal/childproc"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	platformsqlite "github.com/rivus/collab/platform/sqlite"
)

// The timing of the managers in real processes, on the real clock.
const (
	procTTL       = 2 * time.Second
	procHeartbeat = 500 * time.Millisecond
)

// holderMode prefixes the child mode of a lease holder ("holder:sqlite");
// any other mode is a fence holder (runChild).
const holderMode = "holder:"

// runChildMode runs the child that mode names.
func runChildMode(mode string) error {
	if kind, ok := strings.CutPrefix(mode, holderMode); ok {
		return runHolder(kind)
	}
	return runChild(mode)
}

// runHolder is the body of a lease holder child. It acquires the key and
// says "acquired <token>", or "held <pid of the holder>" and ends. Then
// it reports every lease event as "event <kind>" and the end of the
// lease as "lost <err>", runs empty fenced work for every "fenced" line
// on its stdin and says "fenced <RunFenced's error>", and closes its
// manager when its stdin closes.
func runHolder(kind string) error {
	p := platformsqlite.OS()
	repo, closeRepo, err := openKind(p, kind, os.Getenv(childPathEnv))
	if err != nil {
		return err
	}
	defer closeRepo()
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	m, err := lease.NewManager(lease.Config{TTL: procTTL, Heartbeat: procHeartbeat, Repository: repo, Platform: p,
		OnEvent: func(e lease.Event) { say("event %s", e.Kind) }})
	if err != nil {
		return err
	}
	defer m.Close()
	ctx := context.Background()
	h, err := m.Acquire(ctx, os.Getenv(childKeyEnv))
	var held *lease.HeldError
	if errors.As(err, &held) && held.Holder != nil {
		say("held %d", held.Holder.PID)
		return nil
	}
	if err != nil {
		return err
	}
	say("acquired %d", h.Token())
	go func() {
		<-h.Lost()
		say("lost %v", h.Err())
	}()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == "fenced" {
			say("fenced %v", h.RunFenced(ctx, func(context.Context, lease.Token) error { return nil }))
		}
	}
	return m.Close()
}

// holderProc is a running lease holder child.
type holderProc struct {
	*childproc.Child
	lines chan string // the child's stdout, closed at its end
	wait  func() error
}

// startHolder starts a lease holder child on the repository of kind at
// path. It is killed and reaped at the end of the test if it still runs.
func startHolder(t *testing.T, kind, path, key string) *holderProc {
	t.Helper()
	c := childproc.Start(t, childEnv+"="+holderMode+kind, childPathEnv+"="+path, childKeyEnv+"="+key)
	p := &holderProc{Child: c, lines: make(chan string, 1024)}
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer close(p.lines)
		for sc := bufio.NewScanner(c.Stdout()); sc.Scan(); {
			p.lines <- sc.Text()
		}
	}()
	// Wait closes stdout: read it to the end first.
	p.wait = sync.OnceValue(func() error {
		for range p.lines {
		}
		<-read
		return c.Wait()
	})
	t.Cleanup(func() {
		_ = c.Stdin.Close()
		_ = c.Cmd.Process.Kill() // fails harmlessly once reaped
		_ = p.wait()
	})
	return p
}

// expect waits for the child's next line starting with prefix, skipping
// others, and returns the rest of it.
func (p *holderProc) expect(t *testing.T, prefix string) string {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("holder %d ended (%v) before saying %q", p.Pid(), p.wait(), prefix)
			}
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				return rest
			}
		case <-deadline.C:
			t.Fatalf("holder %d did not say %q within %v", p.Pid(), prefix, waitLimit)
		}
	}
}

// acquired waits for the child to acquire the lease and returns its token.
func (p *holderProc) acquired(t *testing.T) lease.Token {
	t.Helper()
	tok, err := strconv.ParseUint(p.expect(t, "acquired "), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return lease.Token(tok)
}

func (p *holderProc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.Cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// say sends the child a command line.
func (p *holderProc) say(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.Stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// procManager is this process's manager on the repository of kind at
// path, on the real platform.
func procManager(t *testing.T, kind, path string) (*lease.Manager, *recorder, store.Repository) {
	t.Helper()
	repo, closeRepo, err := openKind(platformsqlite.OS(), kind, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := closeRepo(); err != nil {
			t.Error(err)
		}
	})
	m, rec := newManager(t, platform.OS(), repo, func(c *lease.Config) { c.TTL, c.Heartbeat = procTTL, procHeartbeat })
	return m, rec, repo
}

// TestProcessHeld: while a process holds the lease, another process gets
// a *HeldError naming it.
func TestProcessHeld(t *testing.T) {
	for _, kind := range repoKinds {
		t.Run(kind, func(t *testing.T) {
			path := repoPath(t.TempDir(), kind)
			m, _, _ := procManager(t, kind, path)
			a := startHolder(t, kind, path, "task:42")
			a.acquired(t)
			b := startHolder(t, kind, path, "task:42")
			if got := b.expect(t, "held "); got != strconv.Itoa(a.Pid()) {
				t.Fatalf("second process: held by %s, want %d", got, a.Pid())
			}
			_, err := m.Acquire(t.Context(), "task:42")
			var held *lease.HeldError
			if !errors.As(err, &held) || held.Holder == nil || held.Holder.PID != a.Pid() {
				t.Fatalf("Acquire = %v, want a *HeldError naming pid %d", err, a.Pid())
			}
		})
	}
}

// TestProcessKilledHolder: after SIGKILL of the holder, another process
// takes the lease over at its first attempt, with a higher generation.
func TestProcessKilledHolder(t *testing.T) {
	for _, kind := range repoKinds {
		t.Run(kind, func(t *testing.T) {
			path := repoPath(t.TempDir(), kind)
			m, rec, _ := procManager(t, kind, path)
			a := startHolder(t, kind, path, "task:42")
			tok := a.acquired(t)
			a.expect(t, "event renewed") // between two writes
			a.signal(t, syscall.SIGKILL)
			var exit *exec.ExitError
			if err := a.wait(); !errors.As(err, &exit) {
				t.Fatalf("killed holder exited with %v", err)
			}
			h, err := m.Acquire(t.Context(), "task:42")
			if err != nil {
				t.Fatalf("first Acquire after the holder was killed: %v", err)
			}
			if h.Token() <= tok {
				t.Fatalf("token %d after the killed holder's %d", h.Token(), tok)
			}
			evs, _ := rec.of(lease.TakenOver)
			if len(evs) != 1 || evs[0].Previous.PID != a.Pid() {
				t.Fatalf("taken over events %+v, want one from pid %d", evs, a.Pid())
			}
		})
	}
}

// TestProcessStoppedHolder: a holder stopped with SIGSTOP is taken over
// once TTL has passed since the observer first saw its record, not
// before; after SIGCONT it finds the lease lost, its RunFenced is
// refused, and its Close leaves the successor's record alone.
func TestProcessStoppedHolder(t *testing.T) {
	for _, kind := range repoKinds {
		t.Run(kind, func(t *testing.T) {
			path := repoPath(t.TempDir(), kind)
			m, _, repo := procManager(t, kind, path)
			a := startHolder(t, kind, path, "task:42")
			tok := a.acquired(t)
			a.expect(t, "event renewed")
			a.signal(t, syscall.SIGSTOP)
			h, attempts, waited := acquireWhenFree(t, m, "task:42", a.Pid())
			if attempts == 0 || waited < procTTL {
				t.Fatalf("took over a stopped holder after %d attempts and %v, want HeldError for the TTL %v", attempts, waited, procTTL)
			}
			if h.Token() <= tok {
				t.Fatalf("token %d after the stopped holder's %d", h.Token(), tok)
			}
			a.signal(t, syscall.SIGCONT)
			if got := a.expect(t, "lost "); !strings.HasPrefix(got, lease.ErrLost.Error()+" ") {
				t.Fatalf("resumed holder: lost %s, want %v", got, lease.ErrLost)
			}
			a.say(t, "fenced")
			if got := a.expect(t, "fenced "); !strings.HasPrefix(got, lease.ErrLost.Error()+" ") {
				t.Fatalf("resumed holder's RunFenced: %s, want %v", got, lease.ErrLost)
			}
			if err := a.Stdin.Close(); err != nil {
				t.Fatal(err)
			}
			if err := a.wait(); err != nil {
				t.Fatalf("resumed holder exited with %v", err)
			}
			self, _ := platform.OS().Process.Self()
			rec, ok, err := repo.Load(t.Context(), "task:42")
			if err != nil || !ok || rec.Snapshot.Generation != h.Token() || rec.Snapshot.Released || rec.Snapshot.Holder != self {
				t.Fatalf("record after the old holder ended: %+v, %v, %v; want ours, generation %d", rec, ok, err, h.Token())
			}
			wantNotEnded(t, h)
		})
	}
}

// acquireWhenFree retries Acquire of key while pid holds it, pausing a
// fraction of a heartbeat between attempts, until it succeeds or five
// TTLs have passed. It returns the lease, the number of HeldErrors, and
// the time since the first attempt began.
func acquireWhenFree(t *testing.T, m *lease.Manager, key string, pid int) (*lease.Lease, int, time.Duration) {
	t.Helper()
	first := time.Now()
	for attempts := 0; ; attempts++ {
		h, err := m.Acquire(t.Context(), key)
		if err == nil {
			return h, attempts, time.Since(first)
		}
		var held *lease.HeldError
		if !errors.As(err, &held) || held.Holder == nil || held.Holder.PID != pid {
			t.Fatalf("Acquire = %v, want the lease or a *HeldError naming pid %d", err, pid)
		}
		if time.Since(first) > 5*procTTL {
			t.Fatalf("still held after %v", time.Since(first))
		}
		pause := time.NewTimer(procHeartbeat / 5) // real time must pass the TTL
		select {
		case <-pause.C:
		case <-t.Context().Done():
			pause.Stop()
			t.Fatal(t.Context().Err())
		}
	}
}
