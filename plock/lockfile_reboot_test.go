package plock

import (
	"context"
	"errors"
	"testing"

	"github.com/rivus/collab/platform/platformtest"
)

// A lock file stamped before the machine rebooted is reclaimed: its
// holder cannot have survived the boot.
func TestLockFileOfAnEarlierBootIsReclaimed(t *testing.T) {
	f := platformtest.New(t, platformtest.WithoutSQLite())
	path := f.Dir + "/daemon.lock"
	old := f.Processes.Start()
	if err := f.Platform.FS.CreateExclusive(path, old.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(context.Background(), f.Platform, path, Options{}); err == nil {
		t.Fatal("a live holder's lock file was taken")
	}
	f.Processes.Reboot()
	l, err := Acquire(context.Background(), f.Platform, path, Options{})
	if err != nil {
		t.Fatalf("Acquire after a reboot = %v; want the earlier boot's file reclaimed", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

// A stamp of this boot in another pid namespace cannot be judged: held.
func TestLockFileOfAnotherNamespaceHolds(t *testing.T) {
	f := platformtest.New(t, platformtest.WithoutSQLite())
	path := f.Dir + "/daemon.lock"
	other := f.Processes.Start()
	other.PIDNamespace++
	if err := f.Platform.FS.CreateExclusive(path, other.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	var held *HeldError
	if _, err := Acquire(context.Background(), f.Platform, path, Options{}); !errors.As(err, &held) || held.Holder == nil || *held.Holder != other {
		t.Fatalf("Acquire = %v; want a HeldError naming %v", err, other)
	}
}
