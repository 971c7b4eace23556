//go:build !windows

package platform

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// TryLock takes an exclusive flock(2) on name, creating it if missing, or
// fails at once with ErrLocked. flock locks belong to the open file, not
// the process: another open of the file in this process is kept out too,
// closing another descriptor does not drop it, and the kernel drops it
// when the holder dies.
func (osFS) TryLock(name string) (Unlocker, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
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
