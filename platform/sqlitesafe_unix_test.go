//go:build unix

package platform

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSQLiteDir: SQLite keeps a database only where nobody else can
// create names: a directory of this user or root, writable by its owner
// alone, whose parents nobody else may rename it out of. A sticky
// directory is not enough.
func TestSQLiteDir(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, mode os.FileMode) string { return mkDir(t, root, name, mode) }
	own := mk("own", 0o700)
	readable := mk("readable", 0o755)
	sticky := mk("sticky", 0o777|os.ModeSticky)
	group := mk("group", 0o770)
	openParent := mk("open", 0o777)
	inOpen := mk("open/inner", 0o700)
	stickyParent := mk("tmp", 0o777|os.ModeSticky)
	inSticky := mk("tmp/inner", 0o700)
	link := filepath.Join(root, "link")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		own: "", readable: "", inSticky: "",
		sticky:       "other users may create files in it (mode 1777)",
		group:        "other users may create files in it (mode 0770)",
		inOpen:       "other users may move it: " + openParent + " above it is writable by them (mode 0777, no sticky bit)",
		link:         "symbolic link",
		stickyParent: "mode 1777",
	}
	if asRoot(t) {
		foreign := mk("foreign", 0o755)
		if err := os.Chown(foreign, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		cases[foreign] = "it belongs to uid 65534"
		inForeign := mk("foreign/inner", 0o700)
		cases[inForeign] = foreign + " above it belongs to uid 65534"
	}
	for dir, want := range cases {
		err := SQLiteDir(OSFS(), dir, "use another store")
		var se *SharedDirError
		switch {
		case want == "" && err != nil:
			t.Errorf("SQLiteDir(%s) = %v, want nil", dir, err)
		case want != "" && (!errors.As(err, &se) || se.Path != dir || !strings.Contains(se.Reason, want)):
			t.Errorf("SQLiteDir(%s) = %v, want a *SharedDirError saying %q", dir, err, want)
		case want != "" && !strings.HasSuffix(err.Error(), ", or use another store"):
			t.Errorf("SQLiteDir(%s) = %q, without the alternatives", dir, err)
		}
	}
}

// TestSQLiteFiles: a database and its -journal, -wal and -shm are each
// missing or this user's regular file with one link, and the database is
// private. Each other case is refused, names the file, and is left as it
// was.
func TestSQLiteFiles(t *testing.T) {
	type plant func(t *testing.T, db string)
	write := func(name string, mode os.FileMode) func(*testing.T, string) {
		return func(t *testing.T, db string) {
			if err := os.WriteFile(db+name, []byte("x"), mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(db+name, mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name   string
		plant  plant
		file   string // the suffix of the file refused
		reason string
	}{
		{"private database and companions", func(t *testing.T, db string) {
			write("", 0o600)(t, db)
			write("-wal", 0o600)(t, db)
			write("-shm", 0o600)(t, db)
		}, "", ""},
		{"legacy readable database", write("", 0o644), "", "other users may open it (mode 0644)"},
		{"link at -wal", func(t *testing.T, db string) {
			if err := os.Symlink("/etc/passwd", db+"-wal"); err != nil {
				t.Fatal(err)
			}
		}, "-wal", "symbolic link"},
		{"FIFO at -shm", func(t *testing.T, db string) {
			if err := syscall.Mkfifo(db+"-shm", 0o600); err != nil {
				t.Fatal(err)
			}
		}, "-shm", "not a regular file"},
		{"hard link at -journal", func(t *testing.T, db string) {
			other := filepath.Join(filepath.Dir(db), "other")
			write("", 0o600)(t, other)
			if err := os.Link(other, db+"-journal"); err != nil {
				t.Fatal(err)
			}
		}, "-journal", "2 hard links"},
	}
	if asRoot(t) {
		theirs := func(suffix string) plant {
			return func(t *testing.T, db string) {
				write(suffix, 0o600)(t, db)
				if err := os.Chown(db+suffix, nobody, nobody); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, suffix := range []string{"", "-wal", "-shm"} {
			cases = append(cases, struct {
				name   string
				plant  plant
				file   string
				reason string
			}{"another user's " + cmp.Or(suffix, "database"), theirs(suffix), suffix, "belongs to uid 65534"})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "x.db")
			tc.plant(t, db)
			before, _ := os.Lstat(db + tc.file)
			err := SQLiteFiles(OSFS(), db)
			var fe *SQLiteFileError
			switch {
			case tc.reason == "" && err != nil:
				t.Fatalf("SQLiteFiles = %v, want nil", err)
			case tc.reason != "" && (!errors.As(err, &fe) || fe.Path != db+tc.file || !strings.Contains(fe.Reason, tc.reason)):
				t.Fatalf("SQLiteFiles = %v, want a *SQLiteFileError on %s saying %q", err, filepath.Base(db+tc.file), tc.reason)
			}
			if after, _ := os.Lstat(db + tc.file); before != nil && (after == nil || !os.SameFile(before, after)) {
				t.Errorf("the check changed %s", db+tc.file)
			}
		})
	}
}

// modeText is fmt's %04o of the permission bits with the sticky bit.
func TestModeText(t *testing.T) {
	for _, tt := range []struct {
		mode fs.FileMode
		want string
	}{
		{0, "0000"}, {0o7, "0007"}, {0o644, "0644"}, {0o777 | fs.ModeSticky, "1777"},
		{0o755 | fs.ModeDir, "0755"}, {0o1 | fs.ModeSticky | fs.ModeSetuid, "1001"},
	} {
		if got := modeText(tt.mode); got != tt.want {
			t.Errorf("modeText(%v) = %q, want %q", tt.mode, got, tt.want)
		}
	}
}
