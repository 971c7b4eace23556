package platform

import (
	"fmt"
	"io/fs"
	"os"
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
// files. Where ownership is unknown (windows), it checks only that dir is
// a directory.
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
	return nil
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
