package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rivus/collab/internal/command"
	"github.com/rivus/collab/linearizability/torture"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/sqlite"
	"github.com/rivus/collab/plock"
)

func TestLockRunsCommandAndExitsWithItsStatus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.lock")
	tests := []struct {
		name string
		argv []string
		code int
	}{
		{"success", []string{"true"}, 0},
		{"exit status", []string{"sh", "-c", "exit 3"}, 3},
		{"killed by SIGTERM", []string{"sh", "-c", "kill -TERM $$"}, 128 + 15},
		{"missing command", []string{filepath.Join(t.TempDir(), "absent")}, 127},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", append([]string{"lock", path, "--"}, tc.argv...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, errOut)
			}
			if held, err := plock.IsHeld(context.Background(), sqlite.OS(), path); err != nil || held {
				t.Fatalf("lock still held after the command: %v, %v", held, err)
			}
		})
	}
}

// otherSQLite is a SQLite value of its own, so that locks taken through
// it meet this process's other locks in SQLite, as another process would.
type otherSQLite struct{ platform.SQLite }

func TestLockIsHeldWhileTheCommandRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.lock")
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan int)
	go func() {
		var errb bytes.Buffer
		done <- run([]string{"lock", path, "--", "sh", "-c", "echo ready; read line || true"}, stdinR, stdoutW, &errb)
	}()
	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("command said %q, %v", line, err)
	}
	other := *sqlite.OS()
	other.SQLite = &otherSQLite{other.SQLite}
	if held, err := plock.IsHeld(context.Background(), &other, path); err != nil || !held {
		t.Fatalf("IsHeld while the command runs = %v, %v; want true", held, err)
	}
	stdinW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
	if held, err := plock.IsHeld(context.Background(), &other, path); err != nil || held {
		t.Fatalf("IsHeld after the command = %v, %v; want false", held, err)
	}
}

func TestLockHeldExits75NamingTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.lock")
	l, err := plock.Acquire(context.Background(), sqlite.OS(), path, plock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	self, _ := platform.OS().Process.Self()
	code, out, errOut := runCLI(t, "", "lock", path, "--", "sh", "-c", "echo ran")
	if code != command.ExitHeld || out != "" || !strings.Contains(errOut, "pid "+strconv.Itoa(self.PID)) || !strings.Contains(errOut, self.Host) {
		t.Fatalf("exit %d (want %d), stdout %q, stderr %q", code, command.ExitHeld, out, errOut)
	}
	code, _, errOut = runCLI(t, "", "lock", "--wait", "--timeout", "20ms", path, "--", "true")
	if code != command.ExitHeld || !strings.Contains(errOut, "timed out") {
		t.Fatalf("--timeout: exit %d, stderr %q", code, errOut)
	}
}

func TestLockStatus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.lock")
	code, out, _ := runCLI(t, "", "lock", "status", path)
	if code != 1 || !strings.Contains(out, "free") {
		t.Fatalf("free lock: exit %d, output %q", code, out)
	}
	l, err := plock.Acquire(context.Background(), sqlite.OS(), path, plock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	self, _ := platform.OS().Process.Self()
	code, out, _ = runCLI(t, "", "lock", "status", path)
	if code != 0 || !strings.Contains(out, "held by pid "+strconv.Itoa(self.PID)) {
		t.Fatalf("held lock: exit %d, output %q", code, out)
	}
	code, out, _ = runCLI(t, "", "lock", "status", "--json", path)
	var st struct {
		Path   string             `json:"path"`
		Held   bool               `json:"held"`
		Holder *platform.Identity `json:"holder"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 || !st.Held || st.Holder == nil || st.Holder.PID != self.PID {
		t.Fatalf("--json: exit %d, output %q, %v", code, out, err)
	}
}

func TestLockUsage(t *testing.T) {
	for _, args := range [][]string{{"lock"}, {"lock", "p"}, {"lock", "p", "x", "y"}, {"lock", "status"}} {
		if code, _, _ := runCLI(t, "", args...); code != 2 {
			t.Errorf("collab %q: exit %d, want 2", args, code)
		}
	}
}

func TestLockRejectsANegativeTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.lock")
	code, out, errOut := runCLI(t, "", "lock", "--wait", "--timeout", "-5s", path, "--", "echo", "ran")
	if code != 2 || out != "" || !strings.Contains(errOut, `collab lock: invalid value "-5s" for flag --timeout: negative`) {
		t.Fatalf("exit %d (want 2), stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the lock file was touched: %v", err)
	}
}

// TestLockWarnsOfASharedDirectory: in a directory others may write in,
// a SQLite lock is refused (they could plant its journal), naming the
// directory and --lock-file; a lock file there could be removed by them,
// and collab lock --lock-file says so, and still runs the command. A
// private directory gets no warning, and an empty path is refused.
func TestLockWarnsOfASharedDirectory(t *testing.T) {
	for _, mode := range []os.FileMode{0o777, 0o777 | os.ModeSticky} {
		shared := filepath.Join(t.TempDir(), "shared")
		if err := os.Mkdir(shared, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(shared, mode); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(shared, "app.lock")
		code, out, errOut := runCLI(t, "", "lock", path, "--", "echo", "ran")
		if code != 1 || out != "" || !strings.Contains(errOut, shared+": no SQLite database is kept here") || !strings.Contains(errOut, "--lock-file") {
			t.Fatalf("shared %v, SQLite: exit %d, stdout %q, stderr %q; want the lock refused, naming --lock-file", mode, code, out, errOut)
		}
		code, out, errOut = runCLI(t, "", "lock", "--lock-file", path, "--", "echo", "ran")
		wantWarning := mode&os.ModeSticky == 0
		if code != 0 || out != "ran\n" || strings.Contains(errOut, "other users may write") != wantWarning {
			t.Fatalf("shared %v, lock file: exit %d, stdout %q, stderr %q; want the command run, and a warning %v", mode, code, out, errOut, wantWarning)
		}
	}
	code, _, errOut := runCLI(t, "", "lock", filepath.Join(t.TempDir(), "app.lock"), "--", "true")
	if code != 0 || errOut != "" {
		t.Fatalf("private: exit %d, stderr %q; want no warning", code, errOut)
	}
	if code, _, errOut = runCLI(t, "", "lock", "", "--", "true"); code != 2 || !strings.Contains(errOut, "empty") {
		t.Fatalf("empty path: exit %d, stderr %q; want 2 and a message", code, errOut)
	}
}

// TestCommandGetsNoPrivateVariables: the command under collab lock or
// collab lease run does not get collab's own variables: the store, which
// may carry a password, and the campaign worker's switch.
func TestCommandGetsNoPrivateVariables(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("COLLAB_STORE", filepath.Join(dir, "leases.db"))
	t.Setenv("COLLAB_TORTURE_WORKER", `{"controller":1}`)
	show := `echo "${COLLAB_STORE-unset} ${COLLAB_TORTURE_WORKER-unset} ${PATH:+path}"`
	for _, args := range [][]string{
		{"lock", filepath.Join(dir, "app.lock"), "--", "sh", "-c", show},
		{"lease", "run", "--key", "k", "--", "sh", "-c", show},
	} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 || out != "unset unset path\n" {
			t.Errorf("collab %s: exit %d, stdout %q, stderr %q; want neither variable, and the rest of the environment", args[0], code, out, errOut)
		}
	}
}

// TestTortureWorkerEnvIsTheCampaigns: collab, which links no campaign,
// strips the campaign worker's switch by the name the campaign reads.
func TestTortureWorkerEnvIsTheCampaigns(t *testing.T) {
	if command.TortureWorkerEnv != torture.EnvWorker {
		t.Fatalf("command.TortureWorkerEnv = %q, torture.EnvWorker = %q", command.TortureWorkerEnv, torture.EnvWorker)
	}
}
