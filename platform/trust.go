package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rivus/collab/internal/errwrap"
)

// UntrustedDirError reports a directory that another local user could
// plant files or links in: collab keeps no records or locks there.
type UntrustedDirError struct {
	Path   string
	Reason string
}

func (e *UntrustedDirError) Error() string {
	return e.Path + ": not a directory this user can trust: " + e.Reason
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
		return &UntrustedDirError{dir, "it belongs to uid " + strconv.Itoa(owner)}
	case st.Mode().Perm()&0o022 != 0 && st.Mode()&fs.ModeSticky == 0:
		return &UntrustedDirError{dir, "other users may write in it (mode " + modeText(st.Mode()) + ", no sticky bit)"}
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

// TrustedToCreate returns path resolved by TrustedPath, for the caller
// to use instead of path from then on, once TrustedDir approves the
// nearest directory that exists at or above it: where MkdirAll would
// create the missing ones, so that a directory another user moved in the
// way makes this user create nothing there.
func TrustedToCreate(fsys FS, path string) (string, error) {
	resolved, err := TrustedPath(fsys, path)
	if err != nil {
		return "", err
	}
	for d := resolved; ; d = filepath.Dir(d) {
		_, err := fsys.Lstat(d)
		switch {
		case err == nil:
			if err := TrustedDir(fsys, d); err != nil {
				return "", err
			}
			return resolved, nil
		case !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d:
			return "", err
		}
	}
}

// maxLinks bounds the symbolic links TrustedPath follows, as the
// kernel's ELOOP does.
const maxLinks = 40

// TrustedPath returns path, absolute, with every symbolic link above its
// last element resolved, for the caller to use instead of path from then
// on: a link another user points elsewhere afterwards is no longer
// followed. The last element is kept as it is, for the caller to judge
// (TrustedDir refuses a link there). It refuses, with an
// *UntrustedDirError naming it, a link on the way that another user owns,
// or that lies where another user could replace it (as TrustedDir judges
// the directories above a directory). ".." is taken after the link before
// it, as the kernel takes it. Missing directories are kept as they are,
// for MkdirAll to create; ".." below one is refused. Where ownership is
// unknown (windows), it returns filepath.Abs(path).
func TrustedPath(fsys FS, path string) (string, error) {
	if !ownersKnown {
		return filepath.Abs(path)
	}
	abs := path
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		abs = wd + string(filepath.Separator) + path
	}
	elems := pathElems(abs)
	last := len(elems) - 1
	if last < 0 || elems[last] == ".." {
		return resolveLinks(fsys, path, elems)
	}
	parent, err := resolveLinks(fsys, path, elems[:last])
	if err != nil {
		return "", err
	}
	return filepath.Join(parent, elems[last]), nil
}

// resolveLinks walks elems from the root as the kernel would, judging
// each link on the way as TrustedPath says, and returns the directory
// reached, with the missing end of elems kept.
func resolveLinks(fsys FS, path string, elems []string) (string, error) {
	todo, cur, links := slices.Clone(elems), string(filepath.Separator), 0
	for len(todo) > 0 {
		elem := todo[0]
		todo = todo[1:]
		if elem == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, elem)
		st, err := fsys.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			if slices.Contains(todo, "..") {
				return "", &fs.PathError{Op: "resolve", Path: path, Err: errors.New(`".." below a missing directory`)}
			}
			return filepath.Join(append([]string{next}, todo...)...), nil
		}
		if err != nil {
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", &fs.PathError{Op: "resolve", Path: path, Err: errors.New("too many symbolic links")}
		}
		if owner, _ := fileOwner(st); owner != 0 && owner != effectiveUID() {
			return "", &UntrustedDirError{next, "a symbolic link of uid " + strconv.Itoa(owner) + ", who may point it elsewhere"}
		}
		if reason, err := untrustedAbove(fsys, cur); err != nil || reason != "" {
			if err != nil {
				return "", err
			}
			return "", &UntrustedDirError{next, "a symbolic link on the way: " + reason}
		}
		target, err := readLink(fsys, next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		todo = append(pathElems(target), todo...)
	}
	return cur, nil
}

// pathElems splits path into its elements, without empty ones and ".".
func pathElems(path string) []string {
	elems := strings.Split(path, string(filepath.Separator))
	return slices.DeleteFunc(elems, func(e string) bool { return e == "" || e == "." })
}

// readLink returns the target of the link at name: as the link holds it,
// on the OS file system, or resolved whole on any other.
func readLink(fsys FS, name string) (string, error) {
	if _, ok := fsys.(osFS); ok {
		return os.Readlink(name)
	}
	return fsys.EvalSymlinks(name)
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
		return fail(errwrap.Suffix(ErrNotOwned, " (uid "+strconv.Itoa(owner)+")"))
	}
	if n, ok := fileLinks(st); ok && n != 1 {
		return fail(ErrLinked)
	}
	return nil
}
