//go:build !windows

package file_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/rivus/collab/lease/file"
	"github.com/rivus/collab/lease/internal/repotest"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
)

// TestPlantedRecordFiles: a FIFO, a link to /dev/zero or a huge sparse
// file where a record belongs fails that key at once as a corrupt record
// naming the file, read no further than a record's limit, and is left in
// place; other keys work.
func TestPlantedRecordFiles(t *testing.T) {
	for _, tt := range []struct {
		name, reason string
		plant        func(path string) error
	}{
		{"FIFO", "is not a regular file", func(path string) error { return syscall.Mkfifo(path, 0o600) }},
		{"link to /dev/zero", "is a symbolic link", func(path string) error { return os.Symlink("/dev/zero", path) }},
		{"sparse 2 GiB", "is larger than its format allows", func(path string) error {
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(2 << 30)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			r := openRepo(t, platform.OS(), dir)
			path := filepath.Join(dir, "task_3a42.json")
			if err := tt.plant(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 2)
			go func() {
				_, _, err := r.Load(t.Context(), "task:42")
				done <- err
				_, err = r.Save(t.Context(), "task:42", repotest.Snap(9), 4)
				done <- err
			}()
			for _, op := range []string{"load", "save"} {
				select {
				case err := <-done:
					repotest.WantCorrupt(t, err, op, "task:42", path, tt.reason)
				case <-time.After(time.Minute):
					t.Fatalf("%s has not returned after a minute", op)
				}
			}
			if _, err := os.Lstat(path); err != nil {
				t.Fatalf("the planted file is gone: %v", err)
			}
			if _, err := r.Save(t.Context(), "other", repotest.Snap(1), 0); err != nil {
				t.Fatalf("another key beside a planted one: %v", err)
			}
		})
	}
}

// TestUntrustedStoreDirectoryRefused: a store directory, or its .locks or
// .fences, that another user pre-created (and so can plant links and
// forge records in), or that others may write in, fails Open with a
// *platform.UntrustedDirError naming it, and nothing is written there.
func TestUntrustedStoreDirectoryRefused(t *testing.T) {
	type plant func(t *testing.T, dir string) string
	writable := func(sub string) plant {
		return func(t *testing.T, dir string) string {
			d := filepath.Join(dir, sub)
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(d, 0o777); err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	cases := map[string]plant{"store writable by all": writable(""), ".locks writable by all": writable(".locks"), ".fences writable by all": writable(".fences")}
	if platformtest.Root(t) {
		cases["store owned by nobody"] = func(t *testing.T, dir string) string {
			if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
				t.Fatal(err)
			}
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return dir
		}
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			bad := plant(t, dir)
			r, err := file.Open(platform.OS(), dir)
			var ue *platform.UntrustedDirError
			if !errors.As(err, &ue) || ue.Path != bad {
				t.Fatalf("Open = %v, %v; want an *platform.UntrustedDirError naming %s", r, err, bad)
			}
			if entries, _ := os.ReadDir(bad); slices.ContainsFunc(entries, func(e os.DirEntry) bool { return !e.IsDir() }) {
				t.Fatalf("Open wrote into the untrusted %s: %v", bad, entries)
			}
		})
	}
}
