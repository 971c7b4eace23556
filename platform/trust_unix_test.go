//go:build !windows

package platform

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nobody is the uid of the user the tests that need a second user use:
// they run only as root, which CI is.
const nobody = 65534

// asRoot is platformtest.Root, which this package's own tests cannot
// import: whether t runs as root, for its cases that act as another
// user; under CI=true, t fails instead of leaving them out.
func asRoot(t *testing.T) bool {
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

// TestTrustedDir: a directory another user owns, or may write in without
// the sticky bit, or a link to a directory, is not trusted; nor is one
// that another user may move away or swap: below a directory they own or
// may write in without the sticky bit.
func TestTrustedDir(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, mode os.FileMode) string { return mkDir(t, root, name, mode) }
	own := mk("own", 0o700)
	shared := mk("shared", 0o777)
	inShared := mk("shared/inner", 0o700)
	deepInShared := mk("shared/a/b/inner", 0o700) // the walk goes up to the root
	sticky := mk("sticky", 0o777|os.ModeSticky)
	inSticky := mk("sticky/inner", 0o700)
	if err := os.Symlink(own, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	// TrustedDir judges a link above the directory by what it points to;
	// TrustedPath, which callers resolve paths with, judges the link.
	if err := os.Symlink(shared, filepath.Join(root, "tolink")); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		own: "", sticky: "", inSticky: "",
		shared:                                 "other users may write",
		filepath.Join(root, "link"):            "symbolic link",
		inShared:                               "other users may move it: " + shared + " above it is writable by them (mode 0777, no sticky bit)",
		deepInShared:                           "other users may move it: " + shared + " above it",
		filepath.Join(root, "tolink", "inner"): shared + " above it",
	}
	if asRoot(t) {
		foreign := mk("foreign", 0o755)
		if err := os.Chown(foreign, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		cases[foreign] = "belongs to uid 65534"
		cases[mk("foreign/inner", 0o700)] = foreign + " above it belongs to uid 65534, who may move it"
	}
	for dir, want := range cases {
		err := TrustedDir(OSFS(), dir)
		var ue *UntrustedDirError
		switch {
		case want == "" && err != nil:
			t.Errorf("TrustedDir(%s) = %v, want nil", filepath.Base(dir), err)
		case want != "" && (!errors.As(err, &ue) || ue.Path != dir || !strings.Contains(ue.Reason, want)):
			t.Errorf("TrustedDir(%s) = %v, want an *UntrustedDirError saying %q", filepath.Base(dir), err, want)
		}
	}
}

// mkDir makes the directory name under root, with its parents, and gives
// it mode.
func mkDir(t *testing.T, root, name string, mode os.FileMode) string {
	t.Helper()
	d := filepath.Join(root, name)
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, mode); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestTrustedToCreate judges where MkdirAll would create a missing
// directory: the nearest one that exists, reached through the links on
// the way, and returns the path to use.
func TestTrustedToCreate(t *testing.T) {
	root := t.TempDir()
	own := mkDir(t, root, "own", 0o700)
	shared := mkDir(t, root, "shared", 0o777)
	link := filepath.Join(root, "link") // as /var/run is to /run
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(own, "a", "b"), filepath.Join(link, "a", "b")} {
		if got, err := TrustedToCreate(OSFS(), path); err != nil || got != filepath.Join(own, "a", "b") {
			t.Errorf("TrustedToCreate(%s) = %q, %v; want %s", path, got, err, filepath.Join(own, "a", "b"))
		}
	}
	_, err := TrustedToCreate(OSFS(), filepath.Join(shared, "a", "b"))
	if ue := (*UntrustedDirError)(nil); !errors.As(err, &ue) || ue.Path != shared {
		t.Errorf("TrustedToCreate below a directory all may write in = %v, want an *UntrustedDirError naming %s", err, shared)
	}
	if _, err := os.Stat(filepath.Join(shared, "a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("TrustedToCreate created something: %v", err)
	}
}

// TestTrustedPath (its paths joined by hand: filepath.Join would take
// ".." by its text): the links above a path are resolved, and ".." after
// one is taken as the kernel takes it; a link that another user owns, or
// could replace, is refused; the last element is kept for the caller to
// judge, and so is a missing end.
func TestTrustedPath(t *testing.T) {
	root := t.TempDir()
	own := mkDir(t, root, "own", 0o700)
	sub := mkDir(t, root, "open/sub", 0o700)
	open := filepath.Join(root, "open")
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	symlink := func(target, name string) string {
		t.Helper()
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
		return name
	}
	toOwn := symlink(own, filepath.Join(root, "to-own"))
	relative := symlink("own", filepath.Join(root, "relative"))
	toSub := symlink(sub, filepath.Join(own, "to-sub"))
	last := symlink(own, filepath.Join(own, "last"))
	inOpen := symlink(own, filepath.Join(open, "mine"))
	for path, want := range map[string]string{
		filepath.Join(toOwn, "x"):              filepath.Join(own, "x"),
		filepath.Join(relative, "x", "y"):      filepath.Join(own, "x", "y"),
		toSub + "/../store":                    filepath.Join(open, "store"), // not own/store
		last:                                   last,                         // the caller judges it
		filepath.Join(own, "missing", "store"): filepath.Join(own, "missing", "store"),
	} {
		if got, err := TrustedPath(OSFS(), path); err != nil || got != want {
			t.Errorf("TrustedPath(%s) = %q, %v; want %s", path, got, err, want)
		}
	}
	for path, reason := range map[string]string{
		filepath.Join(inOpen, "store"): "a symbolic link on the way: other users may move it: " + open + " above it",
		own + "/missing/../x/y":        `".." below a missing directory`,
	} {
		if _, err := TrustedPath(OSFS(), path); err == nil || !strings.Contains(err.Error(), reason) {
			t.Errorf("TrustedPath(%s) = %v, want an error saying %q", path, err, reason)
		}
	}
	if asRoot(t) {
		sticky := mkDir(t, root, "sticky", 0o777|os.ModeSticky)
		theirs := symlink(own, filepath.Join(sticky, "theirs"))
		if err := os.Lchown(theirs, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		_, err := TrustedPath(OSFS(), filepath.Join(theirs, "store"))
		if ue := (*UntrustedDirError)(nil); !errors.As(err, &ue) || ue.Path != theirs || !strings.Contains(ue.Reason, "a symbolic link of uid 65534") {
			t.Errorf("TrustedPath through another user's link = %v, want an *UntrustedDirError naming it", err)
		}
	}
}
