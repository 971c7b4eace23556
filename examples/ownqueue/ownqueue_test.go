package ownqueue_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rivus/collab/examples/ownqueue"
	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/platform/sqlite"
	"github.com/rivus/collab/plock"
	"github.com/rivus/collab/policy"
	"github.com/rivus/collab/worldmodel"
)

// holderEnv names the lock a re-executed test binary holds until its
// standard input closes.
const holderEnv = "OWNQUEUE_TEST_HOLD"

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

// TestModelChecked: the policy keeps every safety property of the turn
// world, and every guarantee but the one its spec waives.
func TestModelChecked(t *testing.T) {
	p := ownqueue.OwnQueueTurnPolicy
	r, err := worldmodel.CheckPolicy(p, modelcheck.Options{})
	if err != nil || r.Verdict != modelcheck.Passed {
		t.Fatalf("%s, %v\n%s", r.Summary, err, r.Trace)
	}
	kept, waived := policy.Guarantees(p)
	if len(waived) != 1 || waived[0].Name != "heldAtOnce" || !slices.ContainsFunc(kept, func(g policy.Property) bool { return g.Name == "arrivalOrder" }) {
		t.Fatalf("keeps %v, waives %v", kept, waived)
	}
}

// TestWaiverIsNeeded: without its waiver the policy breaks the guarantee,
// which the checker names.
func TestWaiverIsNeeded(t *testing.T) {
	tbl := *ownqueue.OwnQueueTurnPolicy.Table()
	tbl.Waived = nil
	r, err := worldmodel.CheckPolicy(policy.Compile(&tbl), modelcheck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `violation of "no wait: held at once"`; r.Verdict != modelcheck.Violated || !strings.Contains(r.Trace, want) {
		t.Fatalf("%s, want a %s\n%s", r.Summary, want, r.Trace)
	}
}

// queueing is a policy, telling when a task joins the queue.
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

// TestQueuesBehindItsOwnTasks: while a task of this process holds the
// lock, an acquisition that does not wait gets it once the holder lets
// go, where the shipped policy returns a *HeldError at once.
func TestQueuesBehindItsOwnTasks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.lock")
	p := queueing{ownqueue.OwnQueueTurnPolicy, make(chan struct{}, 1)}
	first, err := plock.Acquire(t.Context(), sqlite.OS(), path, plock.Options{Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plock.Acquire(t.Context(), sqlite.OS(), path, plock.Options{Policy: fsm.TurnPolicy}); !errors.Is(err, plock.ErrHeld) {
		t.Fatalf("the shipped policy: %v, want a *HeldError at once", err)
	}
	got := make(chan error, 1)
	go func() {
		second, err := plock.Acquire(t.Context(), sqlite.OS(), path, plock.Options{Policy: p})
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

// TestFailsFastAgainstAnotherProcess: another process holds the lock; an
// acquisition that does not wait returns a *HeldError at once.
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
	if _, err := plock.Acquire(t.Context(), sqlite.OS(), path, plock.Options{Policy: ownqueue.OwnQueueTurnPolicy}); !errors.Is(err, plock.ErrHeld) {
		t.Fatalf("Acquire = %v, want a *HeldError at once", err)
	}
}
