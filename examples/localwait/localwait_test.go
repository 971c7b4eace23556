package localwait_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rivus/collab/examples/localwait"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/platform/sqlite"
	"github.com/rivus/collab/plock"
	"github.com/rivus/collab/policy"
	"github.com/rivus/collab/worldmodel"
)

// holderEnv names the lock a re-executed test binary holds until its
// standard input closes.
const holderEnv = "LOCALWAIT_TEST_HOLD"

func TestMain(m *testing.M) {
	if path := os.Getenv(holderEnv); path != "" {
		l, err := plock.Acquire(context.Background(), sqlite.OS(), path, plock.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("held")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		_ = l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestModelChecked: the policy keeps every invariant of the turn world.
func TestModelChecked(t *testing.T) {
	r, err := worldmodel.CheckPolicy(localwait.LocalWaitTurnPolicy, modelcheck.Options{})
	if err != nil || r.Verdict != modelcheck.Passed {
		t.Fatalf("%s, %v\n%s", r.Summary, err, r.Trace)
	}
}

// TestFailsFastAgainstAnotherProcess: another process holds the lock; a
// waiting acquisition with this policy returns a *HeldError at once, where
// the shipped policy waits for the holder.
func TestFailsFastAgainstAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.lock")
	holder := exec.Command(os.Args[0], "-test.run=^$")
	holder.Env = append(os.Environ(), holderEnv+"="+path)
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	holder.Stderr = os.Stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = holder.Wait() }()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("the holder said %q, %v", line, err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err = plock.Acquire(ctx, sqlite.OS(), path, plock.Options{Wait: true, Policy: localwait.LocalWaitTurnPolicy})
	if !errors.Is(err, plock.ErrHeld) {
		t.Fatalf("Acquire with the local-wait policy = %v, want a *HeldError at once", err)
	}
	short, cancelShort := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancelShort()
	if _, err := plock.Acquire(short, sqlite.OS(), path, plock.Options{Wait: true}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire with the shipped policy = %v, want it to wait until its context ends", err)
	}
}

// queueing is the policy, telling when a task joins the queue.
type queueing struct {
	policy.Policy
	queued chan struct{}
}

func (q queueing) Step(s policy.StateID, t policy.TriggerID, f policy.Facts) policy.Result {
	r := q.Policy.Step(s, t, f)
	if r.Outputs.Has(policy.TurnOutputEnqueue) {
		q.queued <- struct{}{}
	}
	return r
}

// TestWaitsForItsOwnTasks: tasks of one process still take turns: the
// second, queued while the first holds the lock, gets it when the first
// releases it.
func TestWaitsForItsOwnTasks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.lock")
	p := queueing{localwait.LocalWaitTurnPolicy, make(chan struct{}, 1)}
	opts := plock.Options{Wait: true, Policy: p}
	first, err := plock.Acquire(t.Context(), sqlite.OS(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		second, err := plock.Acquire(t.Context(), sqlite.OS(), path, opts)
		if err == nil {
			err = second.Release()
		}
		got <- err
	}()
	<-p.queued
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the second task: %v, want the lock after the first", err)
	}
}
