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
	sticky := mk("sticky", 0o777|os.ModeSticky)
	inSticky := mk("sticky/inner", 0o700)
	if err := os.Symlink(own, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	// A link above the directory is judged by what it points to.
	if err := os.Symlink(shared, filepath.Join(root, "tolink")); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		own: "", sticky: "", inSticky: "",
		shared:                                 "other users may write",
		filepath.Join(root, "link"):            "symbolic link",
		inShared:                               "other users may move it: " + shared + " above it is writable by them (mode 0777, no sticky bit)",
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
// directory: the nearest one that exists.
func TestTrustedToCreate(t *testing.T) {
	root := t.TempDir()
	own := mkDir(t, root, "own", 0o700)
	shared := mkDir(t, root, "shared", 0o777)
	if err := TrustedToCreate(OSFS(), filepath.Join(own, "a", "b")); err != nil {
		t.Errorf("TrustedToCreate below a private directory = %v, want nil", err)
	}
	err := TrustedToCreate(OSFS(), filepath.Join(shared, "a", "b"))
	if ue := (*UntrustedDirError)(nil); !errors.As(err, &ue) || ue.Path != shared {
		t.Errorf("TrustedToCreate below a directory all may write in = %v, want an *UntrustedDirError naming %s", err, shared)
	}
	if _, err := os.Stat(filepath.Join(shared, "a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("TrustedToCreate created something: %v", err)
	}
}
