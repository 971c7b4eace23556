//go:build unix

package torture

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivus/collab/platform/platformtest"
)

// TestRunRefusesAnotherUsersDir: a run directory that another user
// (nobody) made first in a shared directory, or one that others may
// write in, or a link, could have its names swapped for links to the
// caller's files, which the campaign would then truncate; so could one
// below a directory others may write in. Each is refused before anything
// is written.
func TestRunRefusesAnotherUsersDir(t *testing.T) {
	platformtest.NeedRoot(t)
	shared := platformtest.SharedDir(t, true)
	planted := filepath.Join(shared, "run")
	platformtest.Plant(t, `mkdir -m 700 "$1"`, planted)
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	// Below a directory all may write in, a run directory, new or not,
	// could be swapped after the check.
	openParent := platformtest.SharedDir(t, false)
	inOpen := filepath.Join(openParent, "run")
	belowOpen := filepath.Join(openParent, "existing")
	if err := os.Mkdir(belowOpen, 0o700); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		planted: "belongs to uid 65534", open: "may be written by other users (mode 0777)", link: "is a symbolic link",
		inOpen:    "cannot be trusted: " + openParent + ": not a directory this user can trust: other users may write in it",
		belowOpen: "cannot be trusted: " + openParent + ": not a directory this user can trust: other users may write in it (mode 0777",
	} {
		cfg := smallConfig(t, StoreFile)
		cfg.Dir = dir
		res, err := Run(context.Background(), cfg)
		ce := configError(t, err, "Dir")
		if res != nil || !strings.Contains(ce.Error(), want) || !strings.Contains(ce.Error(), dir) {
			t.Errorf("Run in %s = %v, %q; want no result and an error saying it %s", dir, res, ce, want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("the refused run wrote in %s: %d entries", dir, len(entries))
		}
	}
	if _, err := os.Lstat(inOpen); err == nil {
		t.Errorf("the refused run made %s", inOpen)
	}
}
