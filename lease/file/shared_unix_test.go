//go:build unix

package file_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/file"
	"github.com/rivus/collab/lease/internal/repotest"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
	"golang.org/x/sys/unix"
)

// TestOtherUsersFilesRefused: in a sticky store directory (1777, as under
// /tmp) another user (nobody) can create names. A well-formed record it
// plants, at the highest generation, is refused as not this user's and
// named, not trusted (the listing shows its key, whose load says so); a
// directory it makes where a long key's record is nested, or a link
// there, fails that key, naming it, and nothing is written through it;
// its directories, however deep (deeper than PATH_MAX), do not stop the
// listing. Other keys work.
func TestOtherUsersFilesRefused(t *testing.T) {
	platformtest.NeedRoot(t)
	dir := platformtest.SharedDir(t, true)
	r := openRepo(t, platform.OS(), dir)

	// A well-formed record of generation 2^64-2, as a holder would write.
	sd := t.TempDir()
	scratch := openRepo(t, platform.OS(), sd)
	if _, err := scratch.Save(t.Context(), "job", repotest.Snap(1<<64-2), 0); err != nil {
		t.Fatal(err)
	}
	forged := filepath.Join(dir, "forged")
	if err := copyFile(filepath.Join(sd, "job.json"), forged, 0o644); err != nil {
		t.Fatal(err)
	}
	forgedBytes, err := os.ReadFile(forged)
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(dir, "job.json")
	long := strings.Repeat("k", 250)
	nest := filepath.Join(dir, strings.Repeat("k", 200))
	deep := filepath.Join(dir, "deep")
	platformtest.Plant(t, `cp "$2" "$1" && mkdir "$3" && ln -s /root "$4"`,
		record, forged, nest, filepath.Join(dir, strings.Repeat("j", 200)))
	nestDeeperThanPathMax(t, deep)
	_, _, err = r.Load(t.Context(), "job")
	repotest.WantCorrupt(t, err, "load", "job", record, "belongs to another user")
	_, err = r.Save(t.Context(), "job", repotest.Snap(1), 1)
	repotest.WantCorrupt(t, err, "save", "job", record, "belongs to another user")
	// A forced break does not write over it at the generation after
	// 2^64-2, which would leave the key unleasable: it is left for a human.
	_, err = lease.Break(t.Context(), r, platform.OS(), "job", true)
	repotest.WantCorrupt(t, err, "load", "job", record, "belongs to another user")

	for key, where := range map[string]string{long: nest, strings.Repeat("j", 250): filepath.Join(dir, strings.Repeat("j", 200))} {
		_, err = r.Save(t.Context(), key, repotest.Snap(1), 0)
		var ue *platform.UntrustedDirError
		if !errors.As(err, &ue) || ue.Path != where {
			t.Errorf("Save of a long key whose directory another user made = %v, want an *UntrustedDirError naming %s", err, where)
		}
	}
	if entries, _ := os.ReadDir(nest); len(entries) != 0 {
		t.Errorf("a record was written in the other user's directory: %v", entries)
	}
	if _, err := r.Save(t.Context(), "other", repotest.Snap(1), 0); err != nil {
		t.Fatalf("another key: %v", err)
	}
	keys, err := r.Keys(t.Context())
	if err != nil || len(keys) != 2 || keys[0] != "job" || keys[1] != "other" {
		t.Fatalf("Keys = %v, %v; want job (whose load names the planted file) and other, nothing in the other user's directories", keys, err)
	}
	if got, err := os.ReadFile(record); err != nil || !bytes.Equal(got, forgedBytes) {
		t.Errorf("the refused record was changed (%v)", err)
	}
}

// nestDeeperThanPathMax makes at dir a chain of directories "d/d/…/d"
// longer than PATH_MAX (4096 bytes), each nobody's, one level at a time
// through descriptors, as a shell could not (it tracks its path).
func nestDeeperThanPathMax(t *testing.T, dir string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	for i := 0; err == nil && i < 2100; i++ {
		err = unix.Fchown(fd, platformtest.Nobody, platformtest.Nobody)
		if err == nil {
			err = unix.Mkdirat(fd, "d", 0o755)
		}
		if err == nil {
			var next int
			next, err = unix.Openat(fd, "d", unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
			unix.Close(fd)
			fd = next
		}
	}
	if err == nil {
		err = unix.Fchown(fd, platformtest.Nobody, platformtest.Nobody)
	}
	if err != nil {
		t.Fatalf("nesting directories: %v", err)
	}
	unix.Close(fd)
}

// copyFile copies from to a new file to with mode perm.
func copyFile(from, to string, perm fs.FileMode) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.WriteFile(to, data, perm); err != nil {
		return err
	}
	return os.Chmod(to, perm)
}

// TestStoreAnotherUserMayMoveRefused: a store another user could move
// away or swap for a directory or link of their own, mid-lease, would
// lose its records (a generation that starts again) or have this user
// write where the link points. Open and OpenReadOnly refuse a store below
// a directory others may write in without the sticky bit, or below one
// another user owns, naming it, and create nothing there. In a sticky
// directory (as under /tmp) the store is safe: nobody cannot move it.
func TestStoreAnotherUserMayMoveRefused(t *testing.T) {
	platformtest.NeedRoot(t)
	open := platformtest.SharedDir(t, false)
	wantRefused := func(what, dir, reason string) {
		t.Helper()
		for name, opener := range map[string]func(*platform.Platform, string) (*file.Repository, error){"Open": file.Open, "OpenReadOnly": file.OpenReadOnly} {
			_, err := opener(platform.OS(), dir)
			var ue *platform.UntrustedDirError
			if !errors.As(err, &ue) || !strings.Contains(ue.Error(), reason) {
				t.Errorf("%s of a store %s = %v, want an *UntrustedDirError saying %q", name, what, err, reason)
			}
		}
	}

	missing := filepath.Join(open, "store")
	if _, err := file.Open(platform.OS(), missing); !errors.As(err, new(*platform.UntrustedDirError)) {
		t.Errorf("Open of a new store in a directory all may write in = %v, want an *UntrustedDirError", err)
	}
	if _, err := os.Lstat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused Open created the store: %v", err)
	}

	existing := filepath.Join(open, "existing")
	if err := os.Mkdir(existing, 0o700); err != nil {
		t.Fatal(err)
	}
	wantRefused("below a directory all may write in", existing, "other users may move it: "+open+" above it is writable by them")

	sticky := platformtest.SharedDir(t, true)
	theirs := filepath.Join(sticky, "theirs")
	platformtest.Plant(t, `mkdir -m 755 "$1"`, theirs)
	inTheirs := filepath.Join(theirs, "store")
	if err := os.Mkdir(inTheirs, 0o700); err != nil {
		t.Fatal(err)
	}
	wantRefused("in another user's directory", inTheirs, theirs+" above it belongs to uid 65534, who may move it")

	safe := filepath.Join(sticky, "store")
	openRepo(t, platform.OS(), safe)
	if out, err := platformtest.AsNobody(t, `mv "$1" "$1.old"`, safe); err == nil {
		t.Errorf("nobody moved a store out of a sticky directory: %s", out)
	}

	// A link of theirs on the way, pointing at this user's own directory,
	// could be pointed at theirs mid-lease: refused, naming it.
	mine := t.TempDir()
	link := filepath.Join(sticky, "link")
	platformtest.Plant(t, `ln -s "$2" "$1"`, link, mine)
	wantRefused("through another user's link", filepath.Join(link, "store"), link+": not a directory this user can trust: a symbolic link of uid 65534")
	// A link of this user's there is resolved once, at Open: the records
	// are where it pointed then.
	own := filepath.Join(sticky, "own")
	if err := os.Symlink(mine, own); err != nil {
		t.Fatal(err)
	}
	r := openRepo(t, platform.OS(), filepath.Join(own, "store"))
	if err := os.Remove(own); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Save(t.Context(), "job", repotest.Snap(1), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(mine, "store", "job.json")); err != nil {
		t.Errorf("the record is not where the link pointed at Open: %v", err)
	}
}
