//go:build !windows

package platform

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// TryLock takes an exclusive flock(2) on name, creating it if missing, or
// fails at once with ErrLocked. flock locks belong to the open file, not
// the process: another open of the file in this process is kept out too,
// closing another descriptor does not drop it, and the kernel drops it
// when the holder dies.
//
// It does not follow a symbolic link at name, and judges what it opened
// on the descriptor: anything but a regular file of this user or root
// with one link (another user may plant any other in a shared directory)
// fails with a *fs.PathError wrapping ErrSymlink, ErrNotRegular,
// ErrNotOwned or ErrLinked.
func (osFS) TryLock(name string) (Unlocker, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrSymlink}
	}
	if errors.Is(err, fs.ErrPermission) {
		// fs.protected_regular refuses O_CREAT of another user's file in a
		// sticky directory, even to root: say whose it is, if it is.
		if g, gerr := openNoFollow(name); gerr == nil {
			owned := checkOwnFile(g, name)
			g.Close()
			if owned != nil {
				return nil, owned
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if err := checkOwnFile(f, name); err != nil {
		f.Close()
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, &os.PathError{Op: "flock", Path: name, Err: err}
	}
	return &fileLock{f: f}, nil
}

// FileLocked reports whether an exclusive lock TryLock took is held on
// name, by any process. It creates nothing and takes the lock only for as
// long as the probe: it opens name read-only and tries a shared lock. A
// missing file is not locked; a file TryLock would refuse fails with
// TryLock's error (ErrSymlink, ErrNotRegular, ErrNotOwned, ErrLinked).
func FileLocked(name string) (bool, error) {
	f, err := openNoFollow(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := checkOwnFile(f, name); err != nil {
		return false, err
	}
	switch err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); {
	case errors.Is(err, unix.EWOULDBLOCK):
		return true, nil
	case err != nil:
		return false, &os.PathError{Op: "flock", Path: name, Err: err}
	}
	return false, nil // closing f drops the shared lock
}
