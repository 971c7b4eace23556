//go:build !windows

package plock

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
)

// TestPlantedFilesDoNotHang: another local user may put a FIFO, or a link
// to /dev/zero, where the lock keeps its holder stamp or its lock file.
// Acquire and IsHeld must still return at once: a planted .holder is only
// advisory (the contender is refused with no holder named), and a planted
// lock file is an error naming it, read no further than a stamp's limit.
func TestPlantedFilesDoNotHang(t *testing.T) {
	fifo := func(t *testing.T, name string) {
		if err := syscall.Mkfifo(name, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	zero := func(t *testing.T, name string) {
		if err := os.Symlink("/dev/zero", name); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name  string
		opts  []platformtest.Option
		plant func(t *testing.T, f *platformtest.Fake, path string)
		want  error // nil: refused with a *HeldError naming no holder
	}{
		{"FIFO holder stamp", nil, func(t *testing.T, f *platformtest.Fake, path string) {
			mustAcquire(t, f.Platform, path)
			_ = os.Remove(path + holderSuffix)
			fifo(t, path+holderSuffix)
		}, nil},
		{"holder stamp linked to /dev/zero", nil, func(t *testing.T, f *platformtest.Fake, path string) {
			mustAcquire(t, f.Platform, path)
			_ = os.Remove(path + holderSuffix)
			zero(t, path+holderSuffix)
		}, nil},
		{"FIFO lock file", []platformtest.Option{platformtest.WithoutSQLite()}, func(t *testing.T, _ *platformtest.Fake, path string) {
			fifo(t, path)
		}, platform.ErrNotRegular},
		{"lock file linked to /dev/zero", []platformtest.Option{platformtest.WithoutSQLite()}, func(t *testing.T, _ *platformtest.Fake, path string) {
			zero(t, path)
		}, platform.ErrSymlink},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := platformtest.New(t, tt.opts...)
			path := lockPath(f)
			tt.plant(t, f, path)
			other := otherProcess(f, f.Processes.Start())
			done := make(chan error, 2)
			go func() {
				l, err := Acquire(context.Background(), other, path, Options{})
				if l != nil {
					_ = l.Release()
				}
				done <- err
				_, err = IsHeld(context.Background(), other, path)
				done <- err
			}()
			for _, call := range []string{"Acquire", "IsHeld"} {
				var err error
				select {
				case err = <-done:
				case <-time.After(time.Minute):
					t.Fatalf("%s has not returned after a minute", call)
				}
				var held *HeldError
				switch {
				case tt.want != nil && !errors.Is(err, tt.want):
					t.Errorf("%s = %v, want an error matching %v", call, err, tt.want)
				case tt.want == nil && call == "Acquire" && (!errors.As(err, &held) || held.Holder != nil):
					t.Errorf("Acquire = %v, want a *HeldError naming no holder", err)
				case tt.want == nil && call == "IsHeld" && err != nil:
					t.Errorf("IsHeld = %v", err)
				}
			}
		})
	}
}

// TestLockPathLinkOrDirectoryRefused: a link planted at the lock's own
// name is refused, in both modes, before anything is opened or created:
// the link's target (here a file of the caller's) is left as it was. A
// directory is refused by name too, instead of a database error.
func TestLockPathLinkOrDirectoryRefused(t *testing.T) {
	for _, opts := range [][]platformtest.Option{nil, {platformtest.WithoutSQLite()}} {
		f := platformtest.New(t, opts...)
		path := lockPath(f)
		victim := path + ".victim"
		if err := os.WriteFile(victim, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(victim, path); err != nil {
			t.Fatal(err)
		}
		_, acquireErr := Acquire(context.Background(), f.Platform, path, Options{})
		_, isHeldErr := IsHeld(context.Background(), f.Platform, path)
		_, inspectErr := Inspect(context.Background(), f.Platform, path)
		for call, err := range map[string]error{"Acquire": acquireErr, "IsHeld": isHeldErr, "Inspect": inspectErr} {
			if !errors.Is(err, platform.ErrSymlink) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s on a link: %v, want an error naming %s, matching ErrSymlink", call, err, path)
			}
		}
		if _, err := Acquire(context.Background(), f.Platform, f.Dir, Options{}); err == nil || !strings.Contains(err.Error(), "is a directory") {
			t.Errorf("Acquire of a directory: %v, want an error saying it is a directory", err)
		}
		if st, err := os.Stat(victim); err != nil || st.Size() != 0 {
			t.Errorf("the link's target changed: %v, %v", st, err)
		}
	}
}

// TestLockDatabaseIsPrivate: another user who could read the lock
// database could hold a read transaction open and keep every holder out,
// so it is created 0600, whatever the umask; the holder stamp, which is
// only for reading, stays readable by all.
func TestLockDatabaseIsPrivate(t *testing.T) {
	f := platformtest.New(t)
	path := lockPath(f)
	mustAcquire(t, f.Platform, path)
	for name, private := range map[string]bool{path: true, path + holderSuffix: false} {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm()&0o077 == 0; got != private {
			t.Errorf("%s has mode %v; want private %v", name, st.Mode().Perm(), private)
		}
	}
}

// TestForeignStampDoesNotFailTheLock: in a sticky directory (/tmp) a
// holder stamp left by another user cannot be removed; the stamp is only
// for diagnostics, so the lock is still taken, and released, without one.
func TestForeignStampDoesNotFailTheLock(t *testing.T) {
	f := platformtest.New(t)
	path := lockPath(f)
	if err := os.WriteFile(path+holderSuffix, []byte("another user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.FS.SetFault(func(op platformtest.Op, name string) error {
		if op == platformtest.OpRemove && name == path+holderSuffix {
			return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrPermission}
		}
		return nil
	})
	l, err := Acquire(context.Background(), f.Platform, path, Options{})
	if err != nil {
		t.Fatalf("Acquire beside a stamp it may not remove: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
}
