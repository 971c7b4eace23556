package platform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// dirNames lists dir, hidden files included, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func wantDir(t *testing.T, dir string, want ...string) {
	t.Helper()
	if got := dirNames(t, dir); !slices.Equal(got, want) {
		t.Fatalf("%s holds %q, want %q", dir, got, want)
	}
}

func wantContent(t *testing.T, name, want string) {
	t.Helper()
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s holds %q, want %q", name, got, want)
	}
}

func TestCreateExclusive(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "holder.lock")
	if err := OSFS().CreateExclusive(name, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantContent(t, name, "first")
	wantDir(t, dir, "holder.lock")
	if runtime.GOOS != "windows" {
		info, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("mode %v, want 0600", perm)
		}
	}

	err := OSFS().CreateExclusive(name, []byte("second"), 0o600)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second CreateExclusive = %v, want fs.ErrExist", err)
	}
	wantContent(t, name, "first")
	wantDir(t, dir, "holder.lock")
}

func TestCreateExclusiveEmptyData(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "empty")
	if err := OSFS().CreateExclusive(name, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wantContent(t, name, "")
	wantDir(t, dir, "empty")
}

func TestCreateExclusiveMissingDir(t *testing.T) {
	dir := t.TempDir()
	err := OSFS().CreateExclusive(filepath.Join(dir, "missing", "x"), []byte("x"), 0o600)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("CreateExclusive in a missing directory = %v, want fs.ErrNotExist", err)
	}
	wantDir(t, dir)
}

// TestCreateExclusiveOverDirectory: a directory in the way is not
// replaced, and the temporary file is removed.
func TestCreateExclusiveOverDirectory(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "taken")
	if err := os.Mkdir(name, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := OSFS().CreateExclusive(name, []byte("x"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("CreateExclusive over a directory = %v, want fs.ErrExist", err)
	}
	wantDir(t, dir, "taken")
}

func TestCreateExclusiveRace(t *testing.T) {
	const writers = 16
	dir := t.TempDir()
	name := filepath.Join(dir, "holder.lock")
	start := make(chan struct{})
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			<-start
			errs[i] = OSFS().CreateExclusive(name, []byte(fmt.Sprintf("writer %d", i)), 0o600)
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both created the file", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, fs.ErrExist):
			t.Errorf("writer %d: %v, want fs.ErrExist", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer created the file")
	}
	wantContent(t, name, fmt.Sprintf("writer %d", winner))
	wantDir(t, dir, "holder.lock")
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "record.json")
	for _, content := range []string{"one", "two, longer", "", "three"} {
		if err := OSFS().WriteFileAtomic(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		wantContent(t, name, content)
		wantDir(t, dir, "record.json")
	}
}

func TestWriteFileAtomicMissingDir(t *testing.T) {
	dir := t.TempDir()
	err := OSFS().WriteFileAtomic(filepath.Join(dir, "missing", "x"), []byte("x"), 0o600)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("WriteFileAtomic in a missing directory = %v, want fs.ErrNotExist", err)
	}
	wantDir(t, dir)
}

// TestWriteFileAtomicOverDirectory: the rename fails, and the temporary
// file is removed.
func TestWriteFileAtomicOverDirectory(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "taken")
	if err := os.Mkdir(name, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(name, "inside"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := OSFS().WriteFileAtomic(name, []byte("x"), 0o600); err == nil {
		t.Fatal("WriteFileAtomic replaced a non-empty directory")
	}
	wantDir(t, dir, "taken")
}

func TestTempName(t *testing.T) {
	name := filepath.Join("some", "dir", "holder.lock")
	seen := make(map[string]bool)
	for range 1000 {
		tmp := TempName(name)
		if filepath.Dir(tmp) != filepath.Dir(name) {
			t.Fatalf("TempName(%q) = %q, not beside it", name, tmp)
		}
		base := filepath.Base(tmp)
		if !strings.HasPrefix(base, ".holder.lock.") {
			t.Fatalf("TempName(%q) = %q, not a hidden name built on the base", name, tmp)
		}
		if seen[tmp] {
			t.Fatalf("TempName(%q) repeated %q", name, tmp)
		}
		seen[tmp] = true
	}
}

func TestOSFSPlainOperations(t *testing.T) {
	dir := t.TempDir()
	fsys := OSFS()
	sub := filepath.Join(dir, "a", "b")
	if err := fsys.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "y"), []byte("y"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "x"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	entries, err := fsys.ReadDir(sub)
	if err != nil || len(entries) != 2 || entries[0].Name() != "x" || entries[1].Name() != "y" {
		t.Fatalf("ReadDir = %v, %v; want x, y", entries, err)
	}
	if err := fsys.Rename(filepath.Join(sub, "x"), filepath.Join(sub, "y")); err != nil {
		t.Fatal(err)
	}
	if b, err := fsys.ReadFile(filepath.Join(sub, "y"), 64); err != nil || string(b) != "x" {
		t.Fatalf("ReadFile after Rename = %q, %v; want x", b, err)
	}
	if info, err := fsys.Stat(filepath.Join(sub, "y")); err != nil || info.Size() != 1 {
		t.Fatalf("Stat = %v, %v", info, err)
	}
	if err := fsys.Remove(filepath.Join(sub, "y")); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat(filepath.Join(sub, "y")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat after Remove = %v, want fs.ErrNotExist", err)
	}
	wantDir(t, sub)
}

func TestOSFSEvalSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on windows")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "target")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if got, err := OSFS().EvalSymlinks(filepath.Join(link, "x")); err == nil {
		t.Fatalf("EvalSymlinks of a missing file = %q, want an error", got)
	}
	if got, err := OSFS().EvalSymlinks(link); err != nil || got != target {
		t.Fatalf("EvalSymlinks(link) = %q, %v; want %q", got, err, target)
	}
}
