//go:build !windows

package platform

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// openWriteNoFollow opens name for writing, creating it with perm if
// missing, without following a symbolic link at name, and without
// waiting for a FIFO's reader or failing on its absence (read and write,
// as TryLock opens: the caller refuses what is not a regular file).
func openWriteNoFollow(name string, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrSymlink}
	}
	return f, err
}
