//go:build !windows

package platform

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow opens name for reading without following a symbolic link
// at name, and without waiting for a FIFO's writer or a device.
func openNoFollow(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrSymlink}
	}
	return f, err
}

// syncDir makes a directory's entries (a link or rename) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
