package platform

import (
	"errors"
	"os"
	"sync"
)

// ErrLocked is returned by FS.TryLock when another open file holds the
// lock.
var ErrLocked = errors.New("platform: file is locked")

// Unlocker releases a lock taken by FS.TryLock.
type Unlocker interface {
	// Unlock releases the lock and closes the file. It is idempotent.
	Unlock() error
}

type fileLock struct {
	once sync.Once
	f    *os.File
	err  error
}

// File returns the locked file. A child process that inherits it (as one
// of exec.Cmd's ExtraFiles) holds the lock too: the lock belongs to the
// open file, so it lasts until every process holding the file has closed
// it or ended, whichever process took it. (Unix only: windows does not
// pass files to a child this way.)
func (l *fileLock) File() *os.File { return l.f }

// Unlock closes the file, which drops the lock.
func (l *fileLock) Unlock() error {
	l.once.Do(func() { l.err = l.f.Close() })
	return l.err
}
