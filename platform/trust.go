package platform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// UntrustedDirError reports a directory that another local user could
// plant files or links in: collab keeps no records or locks there.
type UntrustedDirError struct {
	Path   string
	Reason string
}

func (e *UntrustedDirError) Error() string {
	return fmt.Sprintf("%s: not a directory this user can trust: %s", e.Path, e.Reason)
}

// TrustedDir returns an *UntrustedDirError unless dir is a directory
// (not a link to one) owned by this user or root, that no other user can
// write to, unless its sticky bit keeps them from replacing others'
// files, and no other user can move dir away or swap it for another:
// every directory above it (links resolved) is owned by this user or
// root and writable by its owner alone, or sticky. Where ownership is
// unknown (windows), it checks only that dir is a directory.
func TrustedDir(fsys FS, dir string) error {
	st, err := fsys.Lstat(dir)
	switch {
	case err != nil:
		return err
	case st.Mode()&fs.ModeSymlink != 0:
		return &UntrustedDirError{dir, "it is a symbolic link"}
	case !st.IsDir():
		return &UntrustedDirError{dir, "it is not a directory"}
	}
	owner, ok := fileOwner(st)
	switch {
	case !ok:
		return nil // windows: ACLs decide, which this does not read
	case owner != 0 && owner != effectiveUID():
		return &UntrustedDirError{dir, fmt.Sprintf("it belongs to uid %d", owner)}
	case st.Mode().Perm()&0o022 != 0 && st.Mode()&fs.ModeSticky == 0:
		return &UntrustedDirError{dir, fmt.Sprintf("other users may write in it (mode %v, no sticky bit)", st.Mode().Perm())}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	parent, err := fsys.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return err
	}
	reason, err := untrustedAbove(fsys, parent)
	if err != nil || reason == "" {
		return err
	}
	return &UntrustedDirError{dir, reason}
}

// TrustedToCreate returns TrustedDir's answer for the nearest directory
// that exists at or above path, links resolved: where MkdirAll(path)
// would create the missing directories, so that a directory another user
// moved in the way makes this user create nothing there.
func TrustedToCreate(fsys FS, path string) error {
	for d := filepath.Clean(path); ; d = filepath.Dir(d) {
		_, err := fsys.Lstat(d)
		switch {
		case err == nil:
			real, err := fsys.EvalSymlinks(d)
			if err != nil {
				return err
			}
			return TrustedDir(fsys, real)
		case !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d:
			return err
		}
	}
}

// FileOwner returns the uid that owns the file st describes, where the
// platform has owners (not windows).
func FileOwner(st fs.FileInfo) (int, bool) { return fileOwner(st) }

// checkOwnFile judges the file f opened at name on its descriptor: a
// regular file of this user or root, with one link. Where owners and
// links are unknown (windows), only the first.
func checkOwnFile(f *os.File, name string) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	fail := func(e error) error { return &fs.PathError{Op: "open", Path: name, Err: e} }
	if !st.Mode().IsRegular() {
		return fail(ErrNotRegular)
	}
	if owner, ok := fileOwner(st); ok && owner != 0 && owner != effectiveUID() {
		return fail(fmt.Errorf("%w (uid %d)", ErrNotOwned, owner))
	}
	if n, ok := fileLinks(st); ok && n != 1 {
		return fail(ErrLinked)
	}
	return nil
}
