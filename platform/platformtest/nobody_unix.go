//go:build unix

package platformtest

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// Nobody is the uid and gid of the second local user that tests run
// processes as: the attacker of the shared-directory tests.
const Nobody = 65534

// NeedRoot skips t unless it runs as root, which running a process as
// another user, or giving a file to one, needs. Under CI=true it fails
// instead: CI runs the tests as root, and a skipped attack proves nothing.
func NeedRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI must run the tests as root, to act as another local user")
	}
	t.Skip("acting as another local user needs root")
}

// Root reports whether t runs as root, for the cases of a test that
// act as another user and are left out elsewhere, as NeedRoot skips a
// whole test: with a line in the log, or under CI=true by failing t.
func Root(t testing.TB) bool {
	t.Helper()
	if os.Geteuid() == 0 {
		return true
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI must run the tests as root, to act as another local user")
	}
	t.Log("the cases that act as another local user need root: left out")
	return false
}

// AsNobody runs the shell script as Nobody, with args as $1, $2, …, and
// returns what it printed. The caller has called NeedRoot.
func AsNobody(t testing.TB, script string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", script, "sh"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: Nobody, Gid: Nobody}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Plant runs the shell script as Nobody, as AsNobody does, and fails t
// if it fails: the attacker's files a test then defends against.
func Plant(t testing.TB, script string, args ...string) {
	t.Helper()
	if out, err := AsNobody(t, script, args...); err != nil {
		t.Fatalf("planting as nobody: %v: %s", err, out)
	}
}

// SharedDir returns a new directory that every user may create files in,
// as /tmp: mode 1777, or 0777 without sticky, removed when t ends.
func SharedDir(t testing.TB, sticky bool) string {
	t.Helper()
	mode := os.FileMode(0o777)
	if sticky {
		mode |= os.ModeSticky
	}
	return ModeDir(t, mode)
}

// ModeDir returns a new directory under the system's temporary directory
// with mode, removed when t ends: unlike t.TempDir's, its parents let
// other users in (a 0755 one is a daemon's, which others may read).
func ModeDir(t testing.TB, mode os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "collab-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}
