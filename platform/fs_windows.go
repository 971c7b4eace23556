package platform

import (
	"io/fs"
	"os"
)

// openNoFollow opens name for reading, refusing a symbolic link at name
// (checked before the open: windows has no O_NOFOLLOW).
func openNoFollow(name string) (*os.File, error) {
	if st, err := os.Lstat(name); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrSymlink}
	}
	return os.Open(name)
}

// syncDir does nothing on windows, where a directory cannot be opened for
// syncing; NTFS journals its metadata itself.
func syncDir(string) error { return nil }
