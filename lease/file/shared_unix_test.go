//go:build unix

package file_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivus/collab/lease/internal/repotest"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
)

// TestOtherUsersFilesRefused: in a sticky store directory (1777, as under
// /tmp) another user (nobody) can create names. A well-formed record it
// plants, at the highest generation, is refused as not this user's and
// named, not trusted (the listing shows its key, whose load says so); a
// directory it makes where a long key's record is nested, or a link
// there, fails that key, naming it, and nothing is written through it;
// its directories, however deep, do not stop the listing. Other keys
// work.
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
	record := filepath.Join(dir, "job.json")
	long := strings.Repeat("k", 250)
	nest := filepath.Join(dir, strings.Repeat("k", 200))
	deep := filepath.Join(dir, "deep")
	platformtest.Plant(t, `cp "$2" "$1" && mkdir "$3" && mkdir -p "$4/a/b/c/d/e/f" && ln -s /root "$5"`,
		record, forged, nest, deep, filepath.Join(dir, strings.Repeat("j", 200)))
	_, _, err := r.Load(t.Context(), "job")
	repotest.WantCorrupt(t, err, "load", "job", record, "belongs to another user")
	_, err = r.Save(t.Context(), "job", repotest.Snap(1), 1)
	repotest.WantCorrupt(t, err, "save", "job", record, "belongs to another user")

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
	if st, err := os.Lstat(record); err != nil || st.Size() == 0 {
		t.Errorf("the refused record was changed: %v", err)
	}
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
