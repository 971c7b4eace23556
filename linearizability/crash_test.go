package linearizability

import (
	"testing"
	"time"
)

// TestRefusalAfterAnAttemptOfUnknownOutcome: a lock attempt of unknown
// outcome that returned is over at its return. A refusal later, with the
// lock free, is a violation, as it is after an attempt that returned OK
// and an unlock.
func TestRefusalAfterAnAttemptOfUnknownOutcome(t *testing.T) {
	for _, local := range []bool{true, false} {
		for name, first := range map[string]Output{"ok": ok, "unknown": unknown} {
			h := hist(
				op(1, "k", Lock, none, first, 10, 15),
				op(1, "k", Unlock, none, ok, 50, 60),
				op(2, "k", Lock, none, refused, 100, 110),
			)
			h.Local = local
			if got := Check(h, time.Minute).Verdict; got != Violation {
				t.Errorf("Local %v, first attempt %s: %v, want a violation (a refusal with the lock free)", local, name, got)
			}
		}
	}
}

// TestCrashFollowsItsVictimsOperations: a process dies after its last
// clock reading, so its crash frees what its operations took, even when
// the kill was sent before they returned: nothing holds the lock after.
func TestCrashFollowsItsVictimsOperations(t *testing.T) {
	for _, local := range []bool{true, false} {
		for name, h := range map[string]History{
			"lock returned before the kill": hist(
				op(1, "k", Lock, none, ok, 1, 4),
				op(1, "", Crash, none, ok, 5, 30),
				op(2, "k", Lock, none, refused, 100, 110)),
			"lock returned after the kill was sent": hist(
				op(1, "", Crash, none, ok, 5, 30),
				op(1, "k", Lock, none, ok, 10, 15),
				op(2, "k", Lock, none, refused, 100, 110)),
			"lock cut short by the kill": hist(
				open(1, "k", Lock, none, 10),
				op(1, "", Crash, none, ok, 20, 30),
				op(2, "k", Lock, none, refused, 100, 110)),
		} {
			h.Local = local
			if got := Check(h, time.Minute).Verdict; got != Violation {
				t.Errorf("Local %v, %s: %v, want a violation (the lock is free from the reap on)", local, name, got)
			}
		}
	}
}

// TestRefusalWhileAKilledAttemptWasUnderWay: a refusal while a killed
// process's attempt may still have held the lock, up to its reap, is
// contended and dropped; so is a success of another process after the
// reap.
func TestRefusalWhileAKilledAttemptWasUnderWay(t *testing.T) {
	h := hist(
		open(1, "k", Lock, none, 10),
		op(2, "k", Lock, none, refused, 12, 25),
		op(1, "", Crash, none, ok, 20, 30),
		op(2, "k", Lock, none, ok, 40, 50),
	)
	h.Local = true
	if got := Check(h, time.Minute).Verdict; got != Linearizable {
		t.Errorf("%v, want linearizable", got)
	}
}

// TestLockBoundedInAnyHistory: plock acts inside its process whatever the
// lease store, so the lock's operations of unknown outcome are bounded in
// a history that is not Local too: an attempt that returned Unknown
// before its process was killed cannot take the lock after the death.
func TestLockBoundedInAnyHistory(t *testing.T) {
	h := hist(
		op(2, "k", Lock, none, unknown, 16, 17),
		op(2, "", Crash, none, ok, 39, 44),
		op(1, "k", Lock, none, refused, 50, 53),
	)
	if got := Check(h, time.Minute).Verdict; got != Violation {
		t.Errorf("%v, want a violation (the lock is free from the reap on)", got)
	}
}
