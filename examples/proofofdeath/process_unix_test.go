//go:build unix

package proofofdeath_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/rivus/collab/examples/proofofdeath"
	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/file"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
	"github.com/rivus/collab/policy"
)

// The runtime test: real holder processes on this process table, and a
// record of a holder from another boot, taken (or not) by a manager that
// judges processes for real and reads a fake clock, so that the TTL
// passes when the test says.

const (
	ttl = time.Minute
	// holderDirEnv makes the test binary a holder: it leases holderKey in
	// the file store of that directory, says "held", and keeps the lease
	// until its stdin closes.
	holderDirEnv = "PROOFOFDEATH_HOLDER_DIR"
	holderKey    = "job"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(holderDirEnv); dir != "" {
		if err := hold(dir); err != nil {
			fmt.Fprintln(os.Stderr, "holder:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hold is the holder process's body.
func hold(dir string) error {
	repo, err := file.Open(nil, dir)
	if err != nil {
		return err
	}
	m, err := lease.NewManager(lease.Config{TTL: ttl, Heartbeat: ttl / 4, Repository: repo})
	if err != nil {
		return err
	}
	defer m.Close()
	if _, err := m.Acquire(context.Background(), holderKey); err != nil {
		return err
	}
	fmt.Println("held")
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

// startHolder starts a holder process of dir and returns once it holds
// the lease; the process is killed and reaped when the test ends.
func startHolder(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holderDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("the holder said %q, %v", line, err)
	}
	return cmd
}

// observer returns a manager of p on dir that judges processes for real
// and reads the fake clock of f.
func observer(t *testing.T, f *platformtest.Fake, p policy.Policy, dir string) *lease.Manager {
	t.Helper()
	repo, err := file.Open(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	plat := *platform.OS()
	plat.Clock = f.Clock
	m, err := lease.NewManager(lease.Config{TTL: ttl, Heartbeat: ttl / 4, Repository: repo, Platform: &plat, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// wantHeld requires m's acquisition of the key to be refused.
func wantHeld(t *testing.T, m *lease.Manager, why string) {
	t.Helper()
	l, err := m.Acquire(t.Context(), holderKey)
	if !errors.Is(err, lease.ErrHeld) {
		if l != nil {
			l.Close()
		}
		t.Fatalf("%s: Acquire = %v, want the key held", why, err)
	}
}

// wantTaken requires m to take the key over, with generation 2.
func wantTaken(t *testing.T, m *lease.Manager, why string) {
	t.Helper()
	l, err := m.Acquire(t.Context(), holderKey)
	if err != nil {
		t.Fatalf("%s: Acquire = %v, want a takeover", why, err)
	}
	if l.Token() != 2 {
		t.Fatalf("%s: token %d, want 2", why, l.Token())
	}
}

// TestLiveSilentHolderHereStaysHeld: a holder process that is stopped
// (alive, silent) is never taken over by this policy, however long it is
// silent; the shipped policy takes it over once the TTL has passed.
func TestLiveSilentHolderHereStaysHeld(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     policy.Policy
		taken bool
	}{{"proof of death", proofofdeath.ProofLeasePolicy, false}, {"shipped", fsm.LeasePolicy, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := platformtest.New(t)
			holder := startHolder(t, f.Dir)
			if err := holder.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			m := observer(t, f, tc.p, f.Dir)
			wantHeld(t, m, "first sight")
			f.Clock.Advance(2 * ttl)
			if tc.taken {
				wantTaken(t, m, "silent for twice the TTL")
				return
			}
			wantHeld(t, m, "silent for twice the TTL")
			f.Clock.Advance(100 * ttl)
			wantHeld(t, m, "silent for a hundred TTLs")
		})
	}
}

// TestRemoteHolderTakenOverAfterTTL: a record of a holder of another boot
// cannot be judged, and is taken over once silent for the TTL.
func TestRemoteHolderTakenOverAfterTTL(t *testing.T) {
	f := platformtest.New(t)
	repo, err := file.Open(nil, f.Dir)
	if err != nil {
		t.Fatal(err)
	}
	self, err := platform.OS().Process.Self()
	if err != nil {
		t.Fatal(err)
	}
	earlier := self
	earlier.BootID = "00000000-0000-4000-8000-000000000001" // an earlier boot of this host
	snap := store.Snapshot{Generation: 1, Holder: earlier, RenewedAt: time.Now(), TTL: ttl}
	if _, err := repo.Save(t.Context(), holderKey, snap, 0); err != nil {
		t.Fatal(err)
	}
	m := observer(t, f, proofofdeath.ProofLeasePolicy, f.Dir)
	wantHeld(t, m, "first sight")
	f.Clock.Advance(ttl / 2)
	wantHeld(t, m, "silent for half the TTL")
	f.Clock.Advance(ttl / 2)
	wantTaken(t, m, "silent for the TTL")
}

// TestDeadHolderTakenOverAtOnce: a holder process that is gone is taken
// over at once, with no TTL to wait.
func TestDeadHolderTakenOverAtOnce(t *testing.T) {
	f := platformtest.New(t)
	holder := startHolder(t, f.Dir)
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait() // reaped: its pid is gone
	m := observer(t, f, proofofdeath.ProofLeasePolicy, f.Dir)
	wantTaken(t, m, "holder killed")
}
