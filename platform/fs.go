package platform

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// FS is the file system collab keeps locks and records in. Paths are
// operating-system paths. Every file it opens is close-on-exec.
type FS interface {
	// ReadFile returns the contents of name, which may be another user's:
	// it reads at most limit bytes, of a regular file only, and never
	// follows a symbolic link at name nor waits on a FIFO or a device.
	// Such a file fails with a *fs.PathError wrapping ErrSymlink,
	// ErrNotRegular or ErrTooLarge, having read nothing (or, for
	// ErrTooLarge, limit + 1 bytes at most).
	ReadFile(name string, limit int) ([]byte, error)
	// ReadOwnFile is ReadFile of a file that must be this user's (or
	// root's) with one link, judged on the descriptor it opened: a store's
	// record, which another user may have planted in a sticky directory.
	// Any other fails with a *fs.PathError wrapping ErrNotOwned or
	// ErrLinked, having read nothing.
	ReadOwnFile(name string, limit int) ([]byte, error)
	// CreateExclusive creates name holding data, or fails with an error
	// matching fs.ErrExist. The data is written to a private temporary
	// file first, then linked to name, so no reader ever sees name empty
	// or partly written while the machine runs. It is not synced: it is
	// for lock files, whose meaning ends with the boot, and a crash of the
	// machine may leave the file missing or empty.
	CreateExclusive(name string, data []byte, perm fs.FileMode) error
	// WriteFileAtomic replaces name with data: a synced temporary file is
	// renamed over it and the directory synced, so readers see the old or
	// the new contents, never a mixture, even after a crash.
	WriteFileAtomic(name string, data []byte, perm fs.FileMode) error
	// Rename renames oldname to newname, replacing newname.
	Rename(oldname, newname string) error
	// Remove removes name.
	Remove(name string) error
	// MkdirAll creates a directory and its parents.
	MkdirAll(name string, perm fs.FileMode) error
	// Stat describes name.
	Stat(name string) (fs.FileInfo, error)
	// Lstat describes name itself, not what a link at name points to.
	Lstat(name string) (fs.FileInfo, error)
	// ReadDir lists a directory, sorted by name.
	ReadDir(name string) ([]fs.DirEntry, error)
	// EvalSymlinks returns name with every symbolic link resolved.
	EvalSymlinks(name string) (string, error)
	// TryLock takes an exclusive advisory lock on name (created if
	// missing) without waiting, or fails with ErrLocked. The lock belongs
	// to the open file: it excludes other opens in this process too, and
	// the kernel drops it when the holder dies.
	TryLock(name string) (Unlocker, error)
}

type osFS struct{}

// OSFS returns the file system of the running operating system.
func OSFS() FS { return osFS{} }

func (osFS) Rename(oldname, newname string) error         { return os.Rename(oldname, newname) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }
func (osFS) Stat(name string) (fs.FileInfo, error)        { return os.Stat(name) }
func (osFS) Lstat(name string) (fs.FileInfo, error)       { return os.Lstat(name) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error)   { return os.ReadDir(name) }
func (osFS) EvalSymlinks(name string) (string, error)     { return filepath.EvalSymlinks(name) }

func (osFS) CreateExclusive(name string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(name, data, perm, false)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	return os.Link(tmp, name)
}

func (osFS) WriteFileAtomic(name string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(name, data, perm, true)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	return syncDir(filepath.Dir(name))
}

// The kinds of file ReadFile refuses, each wrapped in a *fs.PathError
// naming the file.
var (
	ErrSymlink    = errors.New("is a symbolic link, which is not followed")
	ErrNotRegular = errors.New("is not a regular file")
	ErrTooLarge   = errors.New("is larger than its format allows")
	ErrNotOwned   = errors.New("belongs to another user")
	ErrLinked     = errors.New("has more than one hard link, so another name writes it too")
)

func (osFS) ReadFile(name string, limit int) ([]byte, error) { return readFile(name, limit, false) }

func (osFS) ReadOwnFile(name string, limit int) ([]byte, error) { return readFile(name, limit, true) }

// readFile reads name as ReadFile does, and, if own, as ReadOwnFile does.
func readFile(name string, limit int, own bool) ([]byte, error) {
	f, err := openNoFollow(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if own {
		if err := checkOwnFile(f, name); err != nil {
			return nil, err
		}
	}
	st, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrNotRegular}
	case st.Size() > int64(limit):
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrTooLarge}
	}
	// The file may grow between Stat and the read: read one byte more
	// than the limit to tell.
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	switch {
	case err != nil:
		return nil, err
	case len(data) > limit:
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrTooLarge}
	}
	return data, nil
}

// writeTemp writes data to a new file beside name, syncs it if durable,
// and returns its path. The random part keeps concurrent writers apart.
func writeTemp(name string, data []byte, perm fs.FileMode, durable bool) (string, error) {
	tmp := TempName(name)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		// Name the file the caller asked for, not the private one: the
		// cause (a missing or read-only directory) is the same.
		return "", &fs.PathError{Op: "create", Path: name, Err: pe.Err}
	}
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", errors.Join(err, os.Remove(tmp))
	}
	return tmp, nil
}

// ResolveDir returns path made absolute, with the links of its directory
// resolved; a link at path itself is left for the caller to judge.
func ResolveDir(fsys FS, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	dir, err := fsys.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(abs)), nil
}

// TempName returns a fresh private name beside name: a dot file holding
// name's base and a random suffix, so that it never collides with another
// writer's and is recognisable as collab's. The suffix is math/rand/v2's
// (ChaCha8, seeded by the runtime from the kernel's randomness), not
// crypto/rand's, which would add a fifth to a small program's size: a
// name guessed and taken first makes a create fail (its writers create
// exclusively), never write elsewhere.
func TempName(name string) string {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], rand.Uint64())
	return filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+"."+hex.EncodeToString(b[:])+".tmp")
}
