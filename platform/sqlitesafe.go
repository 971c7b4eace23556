package platform

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
)

// SQLite opens a database's -journal, -wal and -shm files by name, and
// follows links there: a -wal another user planted is replayed into the
// database, a planted -shm lets its owner hold the write lock, and a
// link planted between any check and SQLite's open is followed. No check
// of those names protects a database in a directory another user can
// create names in, sticky or not. So collab keeps a SQLite database only
// in a directory where nobody but its user and root can create, rename or
// remove names (SQLiteDir), and checks the database and its companions
// before each open (SQLiteFiles): in such a directory, nobody else can
// change them between the check and the open.

// SharedDirError reports a directory where collab keeps no SQLite
// database: another user can create names in it, or move it.
type SharedDirError struct {
	Path   string // the directory
	Reason string
	// Instead names the safe alternatives of the caller's package.
	Instead string
}

func (e *SharedDirError) Error() string {
	s := e.Path + ": no SQLite database is kept here: " + e.Reason + ", and SQLite opens a database's -journal, -wal and -shm files by name; use a directory that only you (or root) can write in"
	if e.Instead != "" {
		s += ", or " + e.Instead
	}
	return s
}

// SQLiteFileError reports a SQLite database, or one of its companion
// files, that collab refuses to open: it is not this user's single-link
// regular file, or (the database) other users may read it.
type SQLiteFileError struct {
	Path   string
	Reason string
	Fix    string // what to do about it, if anything
}

func (e *SQLiteFileError) Error() string {
	s := e.Path + ": refused as a SQLite file: " + e.Reason
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// SQLiteDir returns a *SharedDirError, with instead as its alternatives,
// unless nobody but this user and root can create, remove or rename names
// in dir, or move dir: dir is a directory (not a link) owned by this user
// or root that no one else may write in (a sticky bit is not enough:
// whoever creates a name there owns it), and every directory above it is
// owned by this user or root and either writable by its owner alone or
// sticky, so that nobody renames dir away. dir should be free of links
// (EvalSymlinks); a link among its parents is judged by what it points
// to. Where ownership is unknown (windows), it checks only that dir is a
// directory.
func SQLiteDir(fsys FS, dir, instead string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	fail := func(path, reason string) error { return &SharedDirError{Path: path, Reason: reason, Instead: instead} }
	st, err := fsys.Lstat(abs)
	switch {
	case err != nil:
		return err
	case st.Mode()&fs.ModeSymlink != 0:
		return fail(abs, "it is a symbolic link")
	case !st.IsDir():
		return &fs.PathError{Op: "open", Path: abs, Err: errors.New("not a directory")}
	}
	owner, ok := fileOwner(st)
	switch {
	case !ok:
		return nil // windows: ACLs decide, which this does not read
	case owner != 0 && owner != effectiveUID():
		return fail(abs, "it belongs to uid "+strconv.Itoa(owner))
	case st.Mode().Perm()&0o022 != 0:
		return fail(abs, "other users may create files in it (mode "+modeText(st.Mode())+")")
	}
	reason, err := untrustedAbove(fsys, filepath.Dir(abs))
	if err != nil || reason == "" {
		return err
	}
	return fail(abs, reason)
}

// untrustedAbove says why another user could move a name out of dir, or
// dir out of its parents, or "" if nobody but this user and root can:
// dir and every directory above it are owned by this user or root and
// writable by their owner alone, or sticky. Links among them are judged
// by what they point to, so dir should be free of them (EvalSymlinks).
func untrustedAbove(fsys FS, dir string) (string, error) {
	for ; ; dir = filepath.Dir(dir) {
		st, err := fsys.Stat(dir)
		if err != nil {
			return "", err
		}
		owner, _ := fileOwner(st)
		switch {
		case owner != 0 && owner != effectiveUID():
			return dir + " above it belongs to uid " + strconv.Itoa(owner) + ", who may move it", nil
		case st.Mode().Perm()&0o022 != 0 && st.Mode()&fs.ModeSticky == 0:
			return "other users may move it: " + dir + " above it is writable by them (mode " + modeText(st.Mode()) + ", no sticky bit)", nil
		}
		if filepath.Dir(dir) == dir {
			return "", nil
		}
	}
}

// SQLiteCompanions are the suffixes of the files SQLite keeps beside a
// database.
var SQLiteCompanions = [...]string{"-journal", "-wal", "-shm"}

// SQLiteFiles returns a *SQLiteFileError unless the database at path and
// its companions (SQLiteCompanions) are each either missing or a regular
// file (not a link) of this user with one link, and the database is
// readable by its owner alone. Called after SQLiteDir, in the directory
// it approved, its answer holds until this user or root changes the
// files. Where ownership is unknown (windows), it checks only for links
// and regular files.
func SQLiteFiles(fsys FS, path string) error {
	for i, name := range [...]string{path, path + SQLiteCompanions[0], path + SQLiteCompanions[1], path + SQLiteCompanions[2]} {
		st, err := fsys.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		fail := func(reason, fix string) error { return &SQLiteFileError{Path: name, Reason: reason, Fix: fix} }
		remove := "if no process of yours uses the database, remove " + name
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			return fail("it is a symbolic link", remove)
		case !st.Mode().IsRegular():
			return fail("it is not a regular file", remove)
		}
		if owner, ok := fileOwner(st); ok && owner != effectiveUID() {
			return fail("it belongs to uid "+strconv.Itoa(owner)+", not to this user (uid "+strconv.Itoa(effectiveUID())+")", remove)
		}
		if n, ok := fileLinks(st); ok && n != 1 {
			return fail("it has "+strconv.FormatUint(n, 10)+" hard links: another name writes the same file", remove)
		}
		if i == 0 && st.Mode().Perm()&0o077 != 0 {
			return fail("other users may open it (mode "+modeText(st.Mode())+"), and one who holds a read transaction keeps every writer out",
				"make it private: chmod 600 "+name)
		}
	}
	return nil
}

// modeText renders a mode's permission bits, with the sticky bit, in
// octal.
func modeText(m fs.FileMode) string {
	v := uint32(m.Perm())
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	s := strconv.FormatUint(uint64(v), 8)
	return "0000"[len(s):] + s
}
