package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rivus/collab/lease/leader"
	"github.com/rivus/collab/lease/sqlite"
	"github.com/rivus/collab/platform"
	platformsqlite "github.com/rivus/collab/platform/sqlite"
)

// TestObserverSeesPublishedValues: two `collab lease run` processes
// campaign for one key, each publishing its address. A follower that
// only reads the store, through a read-only handle, sees the leader's
// process and its value; when the leader's collab is SIGKILLed, it sees
// the waiting process take over with its own value, and `lease ls` shows
// each leader's value as it leads.
func TestObserverSeesPublishedValues(t *testing.T) {
	store := filepath.Join(t.TempDir(), "leases.db")
	leaseRun := func(value string, wait bool) *exec.Cmd {
		args := []string{"lease", "run", "--store", store, "--key", "leader", "--ttl", "10s", "--heartbeat", "1s", "--value", value}
		if wait {
			args = append(args, "--wait")
		}
		return exec.Command(os.Args[0], append(args, "--", "sh", "-c", "echo $$; exec sleep 60")...)
	}
	first, _ := startCollabCmd(t, leaseRun("addr A", false))
	second := leaseRun("addr B", true)
	second.Env = append(os.Environ(), asCollabEnv+"=1")
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Process.Kill(); _ = second.Wait() })

	repo, err := sqlite.OpenReadOnly(platformsqlite.OS(), store)
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
	await := func(pid int, token uint64, value string) {
		t.Helper()
		deadline := time.After(time.Minute)
		for {
			select {
			case l := <-reports:
				if l.Holder.PID == pid && uint64(l.Token) == token && l.Value == value && l.Liveness == platform.Alive {
					return
				}
			case <-deadline:
				t.Fatalf("the observer did not see pid %d lead term %d with value %q within a minute", pid, token, value)
			}
		}
	}
	lsShows := func(pid int, value string) {
		t.Helper()
		code, out, errOut := runCLI(t, "", "lease", "ls", "--store", store)
		if code != 0 || !lineHas(out, "pid "+strconv.Itoa(pid)+" ", "alive") || !lineHas(out, "pid "+strconv.Itoa(pid)+" ", "  "+value) {
			t.Fatalf("lease ls: exit %d, stderr %q; want pid %d alive with value %q:\n%s", code, errOut, pid, value, out)
		}
	}
	await(first.Process.Pid, 1, "addr A")
	lsShows(first.Process.Pid, "addr A")
	killCollab(t, first)
	await(second.Process.Pid, 2, "addr B")
	lsShows(second.Process.Pid, "addr B")
}
