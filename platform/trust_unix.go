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

// fileLinks returns the number of hard links to the file st describes.
func fileLinks(st fs.FileInfo) (uint64, bool) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink), true
	}
	return 0, false
}

// ownersKnown: files have an owner and mode bits to judge.
const ownersKnown = true
