//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rivus/collab/internal/childproc"
	"github.com/rivus/collab/internal/command"
	"github.com/rivus/collab/platform/sqlite"
	"github.com/rivus/collab/plock"
	"go.uber.org/goleak"
)

// The test binary's roles, chosen by its environment: collab itself, or a
// process that takes the lock at the path given through SQLite
// (modernc.org/sqlite), as collab-full and plock's SQLite mode do.
const (
	asCollabEnv   = "COLLAB_TEST_AS_COLLAB"   // "1": run collab's main
	holdSQLiteEnv = "COLLAB_TEST_HOLD_SQLITE" // hold the lock, print "held", release at EOF on stdin
	trySQLiteEnv  = "COLLAB_TEST_TRY_SQLITE"  // try the lock once, print "taken" or "busy"
)

func TestMain(m *testing.M) {
	// The roles through SQLite first: collab passes its environment on to
	// the command it runs.
	switch {
	case os.Getenv(holdSQLiteEnv) != "":
		os.Exit(throughSQLite(os.Getenv(holdSQLiteEnv), true))
	case os.Getenv(trySQLiteEnv) != "":
		os.Exit(throughSQLite(os.Getenv(trySQLiteEnv), false))
	case os.Getenv(asCollabEnv) == "1":
		main()
	}
	goleak.VerifyTestMain(m)
}

// throughSQLite takes the lock at path through modernc.org/sqlite, once,
// and says whether it got it; with hold it keeps it until stdin ends.
func throughSQLite(path string, hold bool) int {
	l, err := plock.Acquire(context.Background(), sqlite.OS(), path, plock.Options{})
	if errors.Is(err, plock.ErrHeld) {
		fmt.Println("busy")
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if hold {
		fmt.Println("held")
		io.Copy(io.Discard, os.Stdin)
	} else {
		fmt.Println("taken")
	}
	if err := l.Release(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// collab runs the test binary as collab with args and env added, and
// returns its exit status and output.
func collab(t *testing.T, stdin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), asCollabEnv+"=1"), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// TestLockExcludesHoldersThroughSQLite: collab takes the SQLite mode's
// lock through the kernel, writing nothing to the lock database, and a
// process that takes it through SQLite meanwhile is refused; while one
// holds it through SQLite, collab lock exits 75 naming it.
func TestLockExcludesHoldersThroughSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.lock")
	code, out, errOut := collab(t, "", nil, "lock", path, "--", "env", trySQLiteEnv+"="+path, os.Args[0])
	if code != 0 || strings.TrimSpace(out) != "busy" {
		t.Fatalf("a process taking the lock through SQLite under collab lock: exit %d, said %q (stderr %q); want busy", code, out, errOut)
	}
	if st, err := os.Stat(path); err != nil || st.Size() != 0 {
		t.Fatalf("the lock database after collab lock: %v, %v; want it empty, written nothing (SQLite would have written its first page)", st, err)
	}

	holder := childproc.Start(t, holdSQLiteEnv+"="+path)
	holder.Expect(t, "held")
	code, _, errOut = collab(t, "", nil, "lock", path, "--", "true")
	if code != command.ExitHeld || !strings.Contains(errOut, "pid "+strconv.Itoa(holder.Pid())) {
		t.Errorf("collab lock while a process holds the lock through SQLite: exit %d, stderr %q; want %d naming pid %d", code, errOut, command.ExitHeld, holder.Pid())
	}
	if err := holder.Stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if err := holder.Wait(); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := collab(t, "", nil, "lock", path, "--", "true"); code != 0 {
		t.Errorf("collab lock of the released lock: exit %d, stderr %q", code, errOut)
	}
}

// fakeFull writes a collab-full into a new directory that prints its
// arguments and its first line of input, and exits 7; it returns the
// directory, for PATH.
func fakeFull(t *testing.T) string {
	dir := t.TempDir()
	script := "#!/bin/sh\nprintf 'args: %s\\n' \"$*\"\nread line\nprintf 'stdin: %s\\n' \"$line\"\nexit 7\n"
	if err := os.WriteFile(filepath.Join(dir, fullName), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestOtherCommandsRunCollabFull: lease, check, gen and demo are run by
// collab-full in collab's place, with its arguments, standard files and
// exit status.
func TestOtherCommandsRunCollabFull(t *testing.T) {
	dir := fakeFull(t)
	for _, args := range [][]string{{"lease", "ls", "--store", "dir:x"}, {"check"}, {"gen", "-pkg", "p"}, {"demo", "--seed", "1"}} {
		code, out, errOut := collab(t, "input line\n", []string{"PATH=" + dir}, args...)
		want := "args: " + strings.Join(args, " ") + "\nstdin: input line\n"
		if code != 7 || out != want {
			t.Errorf("collab %s: exit %d, output %q (stderr %q); want 7 and %q", strings.Join(args, " "), code, out, errOut, want)
		}
	}
}

// TestWithoutCollabFull: a command that collab-full runs, where there is
// none, says how to install it.
func TestWithoutCollabFull(t *testing.T) {
	code, _, errOut := collab(t, "", []string{"PATH=" + t.TempDir()}, "lease", "ls", "--store", "dir:x")
	if code != 1 || !strings.Contains(errOut, "collab-full") || !strings.Contains(errOut, "go install") {
		t.Fatalf("exit %d, stderr %q; want 1 saying how to install collab-full", code, errOut)
	}
}

// TestHelpListsEveryCommand: collab's help lists the commands it runs
// itself and those collab-full runs for it.
func TestHelpListsEveryCommand(t *testing.T) {
	var out strings.Builder
	if code := command.Run(command.All(runFull), []string{"help"}, strings.NewReader(""), &out, io.Discard); code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	for _, name := range []string{"check", "demo", "gen", "identity", "judge", "lease", "lock"} {
		if !strings.Contains(out.String(), "  "+name+" ") {
			t.Errorf("help lists no %s:\n%s", name, out.String())
		}
	}
}
