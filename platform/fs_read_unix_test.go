//go:build !windows

package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadFileBounded: ReadFile reads a regular file of at most its limit,
// and refuses what another user could plant in its place (a FIFO, a
// device, a link, a huge or sparse file) at once, reading nothing.
func TestReadFileBounded(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(at("ok"), []byte("stamp"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(at("big"), make([]byte, 65), 0o600); err != nil {
		t.Fatal(err)
	}
	sparse, err := os.Create(at("sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(sparse.Truncate(2<<30), sparse.Close()); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(at("fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"link-zero": "/dev/zero", "link-ok": at("ok"), "link-fifo": at("fifo")} {
		if err := os.Symlink(target, at(name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		path string
		want error // nil: reads "stamp"
	}{
		{at("ok"), nil},
		{at("big"), ErrTooLarge},
		{at("sparse"), ErrTooLarge},
		{at("fifo"), ErrNotRegular},
		{"/dev/zero", ErrNotRegular},
		{dir, ErrNotRegular},
		{at("link-zero"), ErrSymlink},
		{at("link-ok"), ErrSymlink},
		{at("link-fifo"), ErrSymlink},
		{at("missing"), fs.ErrNotExist},
	} {
		done := make(chan struct{})
		var (
			data []byte
			err  error
		)
		go func() {
			defer close(done)
			data, err = OSFS().ReadFile(tt.path, 64)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("ReadFile(%s) has not returned after a minute", tt.path)
		}
		var pe *fs.PathError
		switch {
		case tt.want == nil && (err != nil || string(data) != "stamp"):
			t.Errorf("ReadFile(%s) = %q, %v; want the stamp", tt.path, data, err)
		case tt.want != nil && (!errors.Is(err, tt.want) || !errors.As(err, &pe) || pe.Path != tt.path):
			t.Errorf("ReadFile(%s) = %q, %v; want a *fs.PathError naming it, matching %v", tt.path, data, err, tt.want)
		case tt.want != nil && len(data) != 0:
			t.Errorf("ReadFile(%s) returned %d bytes with its error", tt.path, len(data))
		}
	}
}

// TestTryLockRefusesPlantedFiles: a link planted at a lock file's name is
// not followed (the lock would otherwise create or lock its target), and a
// FIFO is not a lock file; the target stays untouched.
func TestTryLockRefusesPlantedFiles(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "victim")
	if err := os.Symlink(target, filepath.Join(dir, "link.lock")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.lock"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]error{"link.lock": ErrSymlink, "fifo.lock": ErrNotRegular} {
		u, err := OSFS().TryLock(filepath.Join(dir, name))
		if u != nil {
			u.Unlock()
		}
		var pe *fs.PathError
		if !errors.Is(err, want) || !errors.As(err, &pe) || filepath.Base(pe.Path) != name {
			t.Errorf("TryLock(%s) = %v, want a *fs.PathError naming it, matching %v", name, err, want)
		}
		held, err := FileLocked(filepath.Join(dir, name))
		if held || !errors.Is(err, want) || !errors.As(err, &pe) || filepath.Base(pe.Path) != name {
			t.Errorf("FileLocked(%s) = %v, %v; want a *fs.PathError naming it, matching %v", name, held, err, want)
		}
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the link's target was created: %v", err)
	}
}
