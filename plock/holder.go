package plock

import (
	"errors"
	"io/fs"

	"github.com/rivus/collab/platform"
)

// holderSuffix names the diagnostics file beside a SQLite lock.
const holderSuffix = ".holder"

// readHolder reads an identity stamp. Anything that is not a valid stamp
// (missing, empty, garbage, a link, a FIFO, too large) yields nil: the
// stamp is for diagnostics, and a bad one must not stop anyone.
func readHolder(fsys platform.FS, name string) *platform.Identity {
	data, err := fsys.ReadFile(name, platform.MaxIdentityJSON)
	if err != nil {
		return nil
	}
	id, err := platform.ParseIdentity(data)
	if err != nil {
		return nil
	}
	return &id
}

// removeIfExists removes name, treating a missing file as removed.
func removeIfExists(fsys platform.FS, name string) error {
	if err := fsys.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
