//go:build unix

package sqlite_test

import (
	"bytes"
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
// is gone the records are what they were. The -wal is a real one, made
// on a copy of the database, that rewinds the record's generation from 2
// to 1: plain SQLite, opening a copy of both, replays it (the control).
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
	rewind := rewindingWAL(t, db)
	if err := os.WriteFile(wal, rewind, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(wal, platformtest.Nobody, platformtest.Nobody); err != nil {
		t.Fatal(err)
	}
	if gen := replayedGeneration(t, db, rewind); gen != 1 {
		t.Fatalf("the control: plain SQLite reads generation %d over the planted -wal, want 1 (the -wal is no real threat)", gen)
	}
	_, err := sqlite.Open(platformsqlite.OS(), db)
	var fe *platform.SQLiteFileError
	if !errors.As(err, &fe) || fe.Path != wal {
		t.Fatalf("Open beside a -wal of uid %d = %v, want a *platform.SQLiteFileError naming it", platformtest.Nobody, err)
	}
	if data, err := os.ReadFile(wal); err != nil || !bytes.Equal(data, rewind) {
		t.Fatalf("the refused -wal was changed (%v)", err)
	}
	if err := os.Remove(wal); err != nil {
		t.Fatal(err)
	}
	r = repotest.OpenSQLite(t, platformsqlite.OS(), db)
	if rec, ok, err := r.Load(t.Context(), "k"); err != nil || !ok || rec.Snapshot.Generation != 2 {
		t.Fatalf("after the refusal: %+v, %v, %v; want generation 2", rec, ok, err)
	}
}

// rewindingWAL returns a -wal that sets key k's generation in db to 1:
// written on a copy of db, and taken while the copy is open, before a
// checkpoint folds it in.
func rewindingWAL(t *testing.T, db string) []byte {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "copy.db")
	copyTo(t, db, cp, 0o600)
	c, err := platformsqlite.OS().SQLite.Open(cp, platform.SQLiteOptions{JournalMode: "WAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetMaxOpenConns(1)
	if _, err := c.Exec("PRAGMA wal_autocheckpoint = 0"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec("UPDATE leases SET generation = 1 WHERE key = 'k'"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cp + "-wal")
	if err != nil || len(data) == 0 {
		t.Fatalf("the copy's -wal: %d bytes, %v", len(data), err)
	}
	return data
}

// replayedGeneration copies db with wal beside it and reads key k's
// generation through plain SQLite, which replays the -wal.
func replayedGeneration(t *testing.T, db string, wal []byte) int64 {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "control.db")
	copyTo(t, db, cp, 0o600)
	if err := os.WriteFile(cp+"-wal", wal, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := platformsqlite.OS().SQLite.Open(cp, platform.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var gen int64
	if err := c.QueryRow("SELECT generation FROM leases WHERE key = 'k'").Scan(&gen); err != nil {
		t.Fatal(err)
	}
	return gen
}

// copyTo copies the file from to a new file to, with mode perm.
func copyTo(t *testing.T, from, to string, perm os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, perm); err != nil {
		t.Fatal(err)
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
