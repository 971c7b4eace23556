package keyfile

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/rivus/collab/lease/internal/check"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// errReadOnly fails the watches of a repository opened read-only.
var errReadOnly = errors.New("a repository opened read-only watches nothing, since a watch creates its wake file")

// WakeSuffix ends the name of a wake file.
const WakeSuffix = ".wake"

// Wakes are per-key wake files under one directory, named as the locks
// are (see Path), through which the repositories tell waiters in any
// process of the host that a key was freed (store.Watcher): a tombstone's
// writer notifies the key's file after it is saved, and each waiter
// watches it (platform.Notifier). On a file system that cannot notify,
// nothing is notified and watches fail, so that waiters poll. A nil
// *Wakes (a repository opened read-only) notifies nothing and watches
// nothing.
type Wakes struct {
	fs  platform.FS
	dir string
}

// NewWakes returns the wake files in dir on fsys. It creates no
// directory.
func NewWakes(fsys platform.FS, dir string) *Wakes { return &Wakes{fs: fsys, dir: dir} }

// Freed wakes the watchers of key. It is a hint, best effort: a file
// that cannot be notified (planted by another user, say) wakes nobody,
// and those waiters poll.
func (w *Wakes) Freed(key string) {
	if w == nil {
		return
	}
	n, ok := w.fs.(platform.Notifier)
	if !ok {
		return
	}
	if path, ok := w.path(key); ok {
		_ = n.Notify(path)
	}
}

// WatchFreed watches key's wake file, as store.Watcher.WatchFreed.
func (w *Wakes) WatchFreed(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if err := check.Call(ctx, key); err != nil {
		return nil, nil, err
	}
	if w == nil {
		return nil, nil, &store.RepositoryError{Op: "watch", Key: key, Err: errReadOnly}
	}
	n, ok := w.fs.(platform.Notifier)
	if !ok {
		return nil, nil, platform.ErrNoNotify
	}
	path, ok := w.path(key)
	if !ok {
		return nil, nil, &store.RepositoryError{Op: "watch", Key: key, Err: platform.ErrNoNotify}
	}
	wake, stop, err := n.Watch(path)
	if err != nil {
		return nil, nil, &store.RepositoryError{Op: "watch", Key: key, Err: err}
	}
	return wake, stop, nil
}

// path returns key's wake file, making the subdirectory a long key's
// file lies in; false if it could not.
func (w *Wakes) path(key string) (string, bool) {
	path, nested := Path(w.dir, key, WakeSuffix)
	if nested && w.fs.MkdirAll(filepath.Dir(path), DirPerm) != nil {
		return "", false
	}
	return path, true
}
