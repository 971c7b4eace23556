package platform

import (
	"errors"
	"io/fs"
	"os"
	"sync"
)

// Notifier is implemented by file systems that wake the watchers of a
// file, in this process and in the other processes of the host, as soon
// as it is notified, without polling: the OS file system on Linux
// (inotify). A notification is a hint, which carries no data: a watcher
// looks for itself at whatever it waits for.
type Notifier interface {
	// Notify wakes every watch of name. It writes a byte into name,
	// creating it (FilePerm) if missing, never through a symbolic link,
	// and only into a regular file of this user (or root) with one link:
	// anything else is a *fs.PathError wrapping ErrSymlink,
	// ErrNotRegular, ErrNotOwned or ErrLinked, and is left as it is.
	Notify(name string) error
	// Watch returns a channel that receives (without blocking the
	// notifier: notifications that find it full coalesce) after each
	// Notify of name that begins after Watch returned, until stop, which
	// is idempotent. It creates name as Notify does, and fails as Notify
	// does on a file it would not write.
	Watch(name string) (wake <-chan struct{}, stop func(), err error)
}

// NotifyPerm is the permission of the files Notify creates.
const NotifyPerm = 0o600

// ErrNoNotify is returned by Watch on an operating system whose file
// system cannot wake watchers without polling; callers then poll.
var ErrNoNotify = errors.New("this operating system cannot wake a file's watchers without polling")

// openNotified opens name for Notify and Watch: it creates it if missing
// and checks what it opened as the Notifier doc says.
func openNotified(name string) (*os.File, error) {
	f, err := openWriteNoFollow(name, NotifyPerm)
	if err != nil {
		return nil, err
	}
	if err := checkOwnFile(f, name); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// notifyFile is Notify of the OS file system.
func notifyFile(name string) error {
	f, err := openNotified(name)
	if err != nil {
		return err
	}
	_, err = f.WriteAt([]byte{1}, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &fs.PathError{Op: "notify", Path: name, Err: err}
	}
	return nil
}

// wakeSet is the channels of the watches of one watched file.
type wakeSet map[chan struct{}]struct{}

// wakeAll wakes every channel of s without blocking.
func (s wakeSet) wakeAll() {
	for c := range s {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// stopOnce returns an idempotent stop that runs f once.
func stopOnce(f func()) func() {
	var once sync.Once
	return func() { once.Do(f) }
}
