package platform

import (
	"io/fs"
	"os"
)

// openWriteNoFollow opens name for writing, creating it with perm if
// missing, refusing a symbolic link at name.
func openWriteNoFollow(name string, perm fs.FileMode) (*os.File, error) {
	if st, err := os.Lstat(name); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrSymlink}
	}
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE, perm)
}
