package platform

import "io/fs"

// fileOwner is unknown on windows: ACLs, not an owner and mode bits,
// decide who may write.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }

func effectiveUID() int { return -1 }

// fileLinks is not read on windows.
func fileLinks(fs.FileInfo) (uint64, bool) { return 0, false }

// ownersKnown: files have no owner and mode bits to judge.
const ownersKnown = false
