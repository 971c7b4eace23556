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

// TestTrustedDir: a directory another user owns, or may write in without
// the sticky bit, or a link to a directory, is not trusted.
func TestTrustedDir(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, mode os.FileMode) string { return mkDir(t, root, name, mode) }
	own := mk("own", 0o700)
	shared := mk("shared", 0o777)
	sticky := mk("sticky", 0o777|os.ModeSticky)
	if err := os.Symlink(own, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{own: "", sticky: "", shared: "other users may write", filepath.Join(root, "link"): "symbolic link"}
	if os.Geteuid() == 0 {
		foreign := mk("foreign", 0o755)
		if err := os.Chown(foreign, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		cases[foreign] = "belongs to uid 65534"
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
