//go:build !windows

package platform

import (
	"io/fs"
	"os"
	"syscall"
)

// fileOwner returns the uid that owns the file st describes.
func fileOwner(st fs.FileInfo) (int, bool) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid), true
	}
	return 0, false
}

func effectiveUID() int { return os.Geteuid() }
