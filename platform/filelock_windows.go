package platform

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// TryLock takes an exclusive LockFileEx lock on name, creating it if
// missing, or fails at once with ErrLocked. A symbolic link at name is
// refused (checked before the open: windows has no O_NOFOLLOW).
func (osFS) TryLock(name string) (Unlocker, error) {
	if st, err := os.Lstat(name); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrSymlink}
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := checkOwnFile(f, name); err != nil {
		f.Close()
		return nil, err
	}
	ol := new(windows.Overlapped)
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err != nil {
		f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, ErrLocked
		}
		return nil, &os.PathError{Op: "LockFileEx", Path: name, Err: err}
	}
	return &fileLock{f: f}, nil
}

// FileLocked reports whether an exclusive lock TryLock took is held on
// name. It creates nothing: it opens name read-only and tries a shared
// lock. A missing file is not locked; a link fails with ErrSymlink (the
// file's owner and links are not judged here).
func FileLocked(name string) (bool, error) {
	if st, err := os.Lstat(name); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return false, &fs.PathError{Op: "open", Path: name, Err: ErrSymlink}
	}
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	ol := new(windows.Overlapped)
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	switch {
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return true, nil
	case err != nil:
		return false, &os.PathError{Op: "LockFileEx", Path: name, Err: err}
	}
	return false, windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}
