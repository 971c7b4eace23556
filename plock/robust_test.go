package plock

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rivus/collab/platform/platformtest"
	"github.com/rivus/collab/platform/sqlite"
)

// TestInspectSeesAHolderOfThisProcessThroughAnotherOpener: Inspect's Held
// is IsHeld's answer, also when this process holds the lock through
// another SQLite value, which the kernel's lock query cannot see.
func TestInspectSeesAHolderOfThisProcessThroughAnotherOpener(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.lock")
	other := *sqlite.OS()
	other.SQLite = newCountingSQLite()
	l, err := Acquire(t.Context(), &other, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if held, err := IsHeld(t.Context(), sqlite.OS(), path); err != nil || !held {
		t.Fatalf("IsHeld = %v, %v; want true", held, err)
	}
	if r, err := Inspect(t.Context(), sqlite.OS(), path); err != nil || !r.Held {
		t.Fatalf("Inspect = %+v, %v; want Held, as IsHeld says", r, err)
	}
}

// TestFailedFileReleaseIsRetried: a lock file that Release could not
// remove (too many open files, for a moment) is removed by a later
// Release, and the lock can be taken again.
func TestFailedFileReleaseIsRetried(t *testing.T) {
	f := newFileFake(t)
	path := lockPath(f)
	l, err := Acquire(t.Context(), f.Platform, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.FS.SetFault(func(op platformtest.Op, name string) error {
		if op == platformtest.OpReadFile && name == path {
			return syscall.EMFILE
		}
		return nil
	})
	if err := l.Release(); err == nil {
		t.Fatal("Release under the fault succeeded")
	}
	f.FS.SetFault(nil)
	if err := l.Release(); err != nil {
		t.Fatalf("Release once the fault is gone = %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("a third Release = %v, want the second's nil", err)
	}
	l2, err := Acquire(t.Context(), f.Platform, path, Options{})
	if err != nil {
		t.Fatalf("Acquire after the retried Release = %v", err)
	}
	l2.Release()
}

// TestLockFileTooLargeIsAStampError: a lock file longer than any identity
// is a *StampError naming it, from Acquire and IsHeld alike, and is left
// as it is.
func TestLockFileTooLargeIsAStampError(t *testing.T) {
	f := newFileFake(t)
	path := lockPath(f)
	content := bytes.Repeat([]byte("garbage "), 1000)
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	var se *StampError
	if l, err := Acquire(t.Context(), f.Platform, path, Options{}); !errors.As(err, &se) || se.Path != path {
		if l != nil {
			l.Release()
		}
		t.Errorf("Acquire over 8000 bytes of garbage = %v, want a *StampError naming %s", err, path)
	}
	if _, err := IsHeld(t.Context(), f.Platform, path); !errors.As(err, &se) {
		t.Errorf("IsHeld over 8000 bytes of garbage = %v, want a *StampError", err)
	}
	if data, _ := os.ReadFile(path); !bytes.Equal(data, content) {
		t.Error("the garbage was changed")
	}
}

// TestWhatCannotBeRemovedAtTheStampsNameKeepsTheLock: the holder stamp is
// for diagnostics only; a directory at its name, which cannot be removed,
// leaves the lock held without a stamp, and the directory as it was.
func TestWhatCannotBeRemovedAtTheStampsNameKeepsTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.lock")
	inside := filepath.Join(path+holderSuffix, "x")
	if err := os.MkdirAll(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(context.Background(), sqlite.OS(), path, Options{})
	if err != nil {
		t.Fatalf("Acquire with a directory at the stamp's name: %v", err)
	}
	if held, err := IsHeld(t.Context(), sqlite.OS(), path); err != nil || !held {
		t.Errorf("IsHeld = %v, %v; want true", held, err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("Release = %v", err)
	}
	if _, err := os.Stat(inside); err != nil {
		t.Errorf("the directory at the stamp's name was touched: %v", err)
	}
}
