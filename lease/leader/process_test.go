//go:build linux || darwin

package leader_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/leader"
	"github.com/rivus/collab/lease/sqlite"
	"github.com/rivus/collab/platform"
	platformsqlite "github.com/rivus/collab/platform/sqlite"
)

// candidateEnv names the SQLite store of a re-executed test binary that
// campaigns for "leader"; candidateTTLEnv its TTL.
const (
	candidateEnv    = "LEADER_TEST_CANDIDATE"
	candidateTTLEnv = "LEADER_TEST_TTL"
)

// runCandidate campaigns, printing a line for each takeover, each term's
// start, and each cancellation of Lead with its cause.
func runCandidate(store string) error {
	ttl, err := time.ParseDuration(os.Getenv(candidateTTLEnv))
	if err != nil {
		return err
	}
	repo, err := sqlite.Open(platformsqlite.OS(), store)
	if err != nil {
		return err
	}
	defer repo.Close()
	m, err := lease.NewManager(lease.Config{TTL: ttl, Heartbeat: ttl / 10, Repository: repo, OnEvent: func(e lease.Event) {
		if e.Kind == lease.TakenOver {
			fmt.Printf("takeover dead=%v\n", e.PreviousDead)
		}
	}})
	if err != nil {
		return err
	}
	defer m.Close()
	return leader.Run(context.Background(), leader.Config{Manager: m, Key: "leader", Value: candidateValue(os.Getpid()),
		Lead: func(ctx context.Context, token lease.Token) error {
			fmt.Printf("lead %d\n", token)
			<-ctx.Done()
			fmt.Printf("cancelled %d: %v\n", token, context.Cause(ctx))
			return nil
		}})
}

// candidateValue is what the candidate of pid publishes.
func candidateValue(pid int) string { return fmt.Sprintf("candidate %d", pid) }

// candidate is a campaigning process and the lines it prints.
type candidate struct {
	cmd   *exec.Cmd
	lines chan string
}

func startCandidate(t *testing.T, store string, ttl time.Duration) *candidate {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), candidateEnv+"="+store, candidateTTLEnv+"="+ttl.String())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &candidate{cmd: cmd, lines: make(chan string, 16)}
	go func() {
		defer close(c.lines)
		s := bufio.NewScanner(out)
		for s.Scan() {
			c.lines <- s.Text()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for range c.lines {
		}
	})
	return c
}

// expect waits for c's next line, which must be want.
func (c *candidate) expect(t *testing.T, want string) {
	t.Helper()
	c.expectLine(t, want, func(line string) bool { return line == want })
}

// expectPrefix is expect for a line that starts with want.
func (c *candidate) expectPrefix(t *testing.T, want string) {
	t.Helper()
	c.expectLine(t, want+"…", func(line string) bool { return strings.HasPrefix(line, want) })
}

func (c *candidate) expectLine(t *testing.T, want string, ok func(string) bool) {
	t.Helper()
	select {
	case line, open := <-c.lines:
		if !open || !ok(line) {
			t.Fatalf("candidate %d said %q (open %v), want %q", c.cmd.Process.Pid, line, open, want)
		}
	case <-time.After(time.Minute):
		t.Fatalf("candidate %d did not say %q within a minute", c.cmd.Process.Pid, want)
	}
}

// leaderAndCandidate starts a candidate that leads with token 1, then a
// second one, both with ttl, on a new store.
func leaderAndCandidate(t *testing.T, ttl time.Duration) (leading, waiting *candidate) {
	store := filepath.Join(t.TempDir(), "leases.db")
	leading = startCandidate(t, store, ttl)
	leading.expect(t, "lead 1")
	return leading, startCandidate(t, store, ttl)
}

// TestKilledLeaderIsSucceededAtOnce: the leader's process is killed; the
// other candidate leads as soon as it looks again, on proof of death,
// not after the TTL.
func TestKilledLeaderIsSucceededAtOnce(t *testing.T) {
	a, b := leaderAndCandidate(t, 10*time.Second)
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := a.cmd.Wait(); !errors.As(err, &exit) {
		t.Fatalf("the leader ended with %v, want killed", err)
	}
	b.expect(t, "takeover dead=true")
	b.expect(t, "lead 2")
}

// TestPausedLeaderIsSucceededAfterTheTTL: the leader is stopped; the
// other candidate leads once the TTL has passed since it saw the leader's
// last renewal, and the stopped leader's Lead is cancelled when it
// resumes, with cause lease.ErrLost.
func TestPausedLeaderIsSucceededAfterTheTTL(t *testing.T) {
	a, b := leaderAndCandidate(t, 2*time.Second)
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	b.expect(t, "takeover dead=false")
	b.expect(t, "lead 2")
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// Lost at its deadline, or by the conflict of a renewal it had in
	// flight when it stopped: the cause says which, after ErrLost's text.
	a.expectPrefix(t, "cancelled 1: "+lease.ErrLost.Error()+` "leader" (generation 1): `)
	select {
	case line := <-b.lines:
		if !strings.HasPrefix(line, "cancelled") {
			t.Fatalf("the new leader said %q", line)
		}
		t.Fatalf("the new leader was cancelled when the old one resumed: %q", line)
	default:
	}
}

// TestObserverSeesTheLeaderReplaced: a process that takes no part in the
// election observes the leader's process, term and published value; when
// the leader is killed it hears the successor's term and value.
func TestObserverSeesTheLeaderReplaced(t *testing.T) {
	store := filepath.Join(t.TempDir(), "leases.db")
	a := startCandidate(t, store, 10*time.Second)
	a.expect(t, "lead 1")
	b := startCandidate(t, store, 10*time.Second)
	repo, err := sqlite.Open(platformsqlite.OS(), store)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	ctx, cancel := context.WithCancel(t.Context())
	reports, done := make(chan leader.Leader, 64), make(chan error, 1)
	go func() {
		done <- leader.Observe(ctx, repo, nil, "leader", 20*time.Millisecond, func(l leader.Leader) { reports <- l })
	}()
	defer func() {
		cancel()
		<-done
	}()
	await := func(what string, ok func(leader.Leader) bool) {
		t.Helper()
		deadline := time.After(time.Minute)
		for {
			select {
			case l := <-reports:
				if ok(l) {
					return
				}
			case <-deadline:
				t.Fatalf("the observer did not see %s within a minute", what)
			}
		}
	}
	await("the first leader alive", func(l leader.Leader) bool {
		return l.Token == 1 && l.Holder.PID == a.cmd.Process.Pid && l.Liveness == platform.Alive && l.Value == candidateValue(a.cmd.Process.Pid)
	})
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	b.expect(t, "takeover dead=true")
	b.expect(t, "lead 2")
	await("the successor's term", func(l leader.Leader) bool {
		return l.Token == 2 && l.Holder.PID == b.cmd.Process.Pid && l.Liveness == platform.Alive && l.Value == candidateValue(b.cmd.Process.Pid)
	})
}
