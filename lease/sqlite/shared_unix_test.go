//go:build unix

package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivus/collab/lease/internal/repotest"
	"github.com/rivus/collab/lease/sqlite"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
	platformsqlite "github.com/rivus/collab/platform/sqlite"
)

// TestSharedDirRefused: in a directory other users can create files in,
// sticky or not, another user (nobody) could create the database first,
// plant its -wal (which SQLite replays into the database, rewinding a
// generation) or its -shm (and hold the write lock), or plant a link
// between any check and SQLite's open. The store refuses such a
// directory, names it and the alternative, and touches nothing there.
func TestSharedDirRefused(t *testing.T) {
	platformtest.NeedRoot(t)
	for _, tc := range []struct {
		name   string
		sticky bool
		plant  string // the attacker's shell script, $1 the database
	}{
		{"attacker's database first", true, `printf 'SQLite format 3\0' > "$1" && chmod 666 "$1"`},
		{"planted -wal and -shm", true, `: > "$1-wal" && : > "$1-shm" && chmod 666 "$1-wal" "$1-shm"`},
		{"link planted at the database", true, `ln -s /etc/collab-victim "$1"`},
		{"nothing planted, no sticky bit", false, `:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := platformtest.SharedDir(t, tc.sticky)
			db := filepath.Join(dir, "leases.db")
			platformtest.Plant(t, tc.plant, db)
			before := listDir(t, dir)
			r, err := sqlite.Open(platformsqlite.OS(), db)
			if err == nil {
				r.Close()
				t.Fatal("the store opened a database in a directory every user can write in")
			}
			var se *platform.SharedDirError
			if !errors.As(err, &se) || se.Path != dir || !strings.Contains(err.Error(), "file store") {
				t.Fatalf("Open = %v, want a *platform.SharedDirError naming %s and the file store", err, dir)
			}
			if after := listDir(t, dir); after != before {
				t.Errorf("the refused open changed the directory: %s, then %s", before, after)
			}
		})
	}
}

// TestPlantedWALNeverChangesAGeneration: a -wal that is not the owner's
// own single-link file, beside a database in a private directory (only
// root or the owner could have put it there, or it is left from another
// user's time), is refused by name before SQLite can replay it; once it
// is gone the records are what they were.
func TestPlantedWALNeverChangesAGeneration(t *testing.T) {
	platformtest.NeedRoot(t)
	db := filepath.Join(t.TempDir(), "leases.db")
	r := repotest.OpenSQLite(t, platformsqlite.OS(), db)
	if _, err := r.Save(t.Context(), "k", repotest.Snap(2), 0); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	wal := db + "-wal"
	if err := os.WriteFile(wal, []byte("not a WAL of ours"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(wal, platformtest.Nobody, platformtest.Nobody); err != nil {
		t.Fatal(err)
	}
	_, err := sqlite.Open(platformsqlite.OS(), db)
	var fe *platform.SQLiteFileError
	if !errors.As(err, &fe) || fe.Path != wal {
		t.Fatalf("Open beside a -wal of uid %d = %v, want a *platform.SQLiteFileError naming it", platformtest.Nobody, err)
	}
	if data, err := os.ReadFile(wal); err != nil || string(data) != "not a WAL of ours" {
		t.Fatalf("the refused -wal was changed: %q, %v", data, err)
	}
	if err := os.Remove(wal); err != nil {
		t.Fatal(err)
	}
	r = repotest.OpenSQLite(t, platformsqlite.OS(), db)
	if rec, ok, err := r.Load(t.Context(), "k"); err != nil || !ok || rec.Snapshot.Generation != 2 {
		t.Fatalf("after the refusal: %+v, %v, %v; want generation 2", rec, ok, err)
	}
}

// listDir describes dir's entries: names, modes and owners.
func listDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(e.Name() + " " + info.Mode().String() + ";")
	}
	return b.String()
}
