//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/rivus/collab/internal/command"
	"github.com/rivus/collab/platform/platformtest"
)

// TestSQLiteRefusedInASharedDir: in a sticky directory every user can
// create files in, where another user (nobody) has planted the lease
// database's -wal and the lock database's -journal, `collab lease run`
// with a SQLite store and `collab lock` refuse at once, naming the
// directory and the alternative, and never run the command; the file
// store and the lock-file mode work there.
func TestSQLiteRefusedInASharedDir(t *testing.T) {
	platformtest.NeedRoot(t)
	dir := platformtest.SharedDir(t, true)
	db, lock := filepath.Join(dir, "leases.db"), filepath.Join(dir, "app.lock")
	platformtest.Plant(t, `: > "$1-wal" && : > "$2-journal" && chmod 666 "$1-wal" "$2-journal"`, db, lock)
	for _, tc := range []struct {
		args    []string
		instead string
	}{
		{[]string{"lease", "run", "--store", db, "--key", "k", "--", "echo", "ran"}, "file store"},
		{[]string{"lock", lock, "--", "echo", "ran"}, "--lock-file"},
	} {
		code, out, errOut := runCLI(t, "", tc.args...)
		if code == 0 || out != "" || !strings.Contains(errOut, dir+": no SQLite database is kept here") || !strings.Contains(errOut, tc.instead) {
			t.Errorf("collab %s: exit %d, stdout %q, stderr %q; want a refusal naming %s and %s", tc.args[0], code, out, errOut, dir, tc.instead)
		}
	}
	for _, name := range []string{db, lock} {
		if _, err := os.Lstat(name); !os.IsNotExist(err) {
			t.Errorf("a refused command left %s (%v)", name, err)
		}
	}
	for _, args := range [][]string{
		{"lease", "run", "--store", "dir:" + filepath.Join(dir, "leases"), "--key", "k", "--", "echo", "ran"},
		{"lock", "--lock-file", lock, "--", "echo", "ran"},
	} {
		if code, out, errOut := runCLI(t, "", args...); code != 0 || out != "ran\n" {
			t.Errorf("collab %s: exit %d, stdout %q, stderr %q; want the command run", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// TestPlantedGuardRefused: another user (nobody) who creates PATH.guard
// first in a shared directory, and holds its flock, kept collab lock out
// for ever, blamed on "an earlier command"; a hard link there had root
// lock, and hand the command, whatever file it names. Both are refused,
// named, and the command does not run.
func TestPlantedGuardRefused(t *testing.T) {
	platformtest.NeedRoot(t)
	dir := platformtest.SharedDir(t, true)
	lock := filepath.Join(dir, "app.lock")
	platformtest.Plant(t, `: > "$1.guard" && chmod 666 "$1.guard"`, lock)
	code, out, errOut := runCLI(t, "", "lock", "--lock-file", lock, "--", "echo", "ran")
	if code != 1 || out != "" || !strings.Contains(errOut, lock+".guard") || !strings.Contains(errOut, "belongs to another user (uid 65534)") {
		t.Errorf("another user's guard: exit %d, stdout %q, stderr %q; want 1, naming the guard and its owner", code, out, errOut)
	}
	// lock status judges the guard's owner before whether it is held (by
	// its owner, as here): it blames no earlier command for it, and says
	// who holds it, where the kernel tells (linux).
	if runtime.GOOS == "linux" { // flock(1), and the kernel's table of locks
		holdAsNobody(t, lock+".guard")
	}
	code, out, errOut = runCLI(t, "", "lock", "status", "--lock-file", lock)
	wantHeld := runtime.GOOS != "linux" || strings.Contains(errOut, "it is held, by pid")
	if code != 1 || !strings.Contains(out, "free") || strings.Contains(out, "earlier command") || !wantHeld ||
		!strings.Contains(errOut, lock+".guard") || !strings.Contains(errOut, "belongs to another user (uid 65534)") || !strings.Contains(errOut, "refuses it") {
		t.Errorf("status of another user's held guard: exit %d, stdout %q, stderr %q; want free to this user, naming the guard, its owner, its holder and the refusal", code, out, errOut)
	}
	private := filepath.Join(t.TempDir(), "app.lock")
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(victim, private+".guard"); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "", "lock", private, "--", "echo", "ran")
	if code != 1 || out != "" || !strings.Contains(errOut, "more than one hard link") {
		t.Errorf("hard-linked guard: exit %d, stdout %q, stderr %q; want 1, naming the link", code, out, errOut)
	}
}

// TestLockStatusNamesAPlantedGuard: a FIFO where the guard belongs (as
// another user could plant in a shared directory) does not hang or fail
// collab lock status: it says the lock is free and names the FIFO, which
// collab lock refuses, naming it.
func TestLockStatusNamesAPlantedGuard(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.lock")
	if err := syscall.Mkfifo(path+command.GuardSuffix, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "lock", "status", path)
	if code != 1 || !strings.Contains(out, "free") || !strings.Contains(errOut, path+command.GuardSuffix) {
		t.Errorf("status: exit %d, stdout %q, stderr %q; want free, naming the guard", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "lock", path, "--", "echo", "ran")
	if code != 1 || out != "" || !strings.Contains(errOut, path+command.GuardSuffix) || !strings.Contains(errOut, "not a regular file") {
		t.Errorf("lock: exit %d, stdout %q, stderr %q; want refused, naming the guard", code, out, errOut)
	}
}

// TestLockStatusSaysASharedDirIsRefused: a SQLite lock another user
// planted in a sticky directory (a database a reader of theirs could
// keep busy) is no lock collab takes there: lock status says that
// collab lock refuses the directory, and why, beside what it finds.
func TestLockStatusSaysASharedDirIsRefused(t *testing.T) {
	platformtest.NeedRoot(t)
	dir := platformtest.SharedDir(t, true)
	lock := filepath.Join(dir, "x.lock")
	platformtest.Plant(t, `: > "$1" && chmod 666 "$1"`, lock)
	code, out, errOut := runCLI(t, "", "lock", "status", lock)
	if code != 1 || !strings.Contains(out, "free") || !strings.Contains(errOut, dir+": no SQLite database is kept here") ||
		!strings.Contains(errOut, "refuses it") {
		t.Errorf("status of a lock in a sticky directory: exit %d, stdout %q, stderr %q; want its state and the refusal, naming %s", code, out, errOut, dir)
	}
	if code, _, errOut := runCLI(t, "", "lock", "status", "--lock-file", lock); strings.Contains(errOut, "no SQLite database") {
		t.Errorf("status in the lock-file mode warned of SQLite: exit %d, stderr %q", code, errOut)
	}
	// A private directory reached through a link (as /var/run is) is
	// judged as collab lock judges it: no warning.
	private := t.TempDir()
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "run")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "", "lock", "status", filepath.Join(link, "x.lock")); code != 1 || errOut != "" {
		t.Errorf("status of a free lock in a private directory through a link: exit %d, stderr %q; want 1 and no warning", code, errOut)
	}
}

// holdAsNobody holds an flock on name as nobody, with flock(1), until t
// ends.
func holdAsNobody(t *testing.T, name string) {
	t.Helper()
	holder := exec.Command("flock", name, "sh", "-c", "echo locked; read x")
	holder.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: platformtest.Nobody, Gid: platformtest.Nobody}}
	release, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	locked, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { release.Close(); _ = holder.Wait() })
	if line, err := bufio.NewReader(locked).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("nobody's flock on %s: %q, %v", name, line, err)
	}
}
