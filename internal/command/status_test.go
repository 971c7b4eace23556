package command

import (
	"strings"
	"testing"

	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/plock"
)

// TestLockStatusEscapesTheHost: a holder's host name is written by
// whoever holds the lock; it reaches the terminal quoted.
func TestLockStatusEscapesTheHost(t *testing.T) {
	r := plock.Report{Held: true, Holder: &platform.Identity{PID: 7, Host: "\x1b[2Jbox"}}
	got := describeStatus("app.lock", r, false, nil)
	if strings.Contains(got, "\x1b") || !strings.Contains(got, `\x1b[2Jbox`) {
		t.Fatalf("describeStatus = %q, want the host quoted", got)
	}
}

// TestLockStatusTellsAStampThatDoesNotMatch: a stamp that names another
// process than the one the kernel names as holder is said to be stale or
// planted, and the holder is the kernel's.
func TestLockStatusTellsAStampThatDoesNotMatch(t *testing.T) {
	r := plock.Report{Held: true, Holder: &platform.Identity{PID: 1, Host: "box"}, LockPID: 4321, StampMismatch: true}
	got := describeStatus("app.lock", r, false, nil)
	if want := "app.lock: held by pid 4321; its .holder stamp names pid 1 on box, which does not hold it (stale or planted)"; got != want {
		t.Fatalf("describeStatus = %q, want %q", got, want)
	}
}
