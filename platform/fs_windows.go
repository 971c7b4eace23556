package platform

// syncDir does nothing on windows, where a directory cannot be opened for
// syncing; NTFS journals its metadata itself.
func syncDir(string) error { return nil }
