package plock

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/rivus/collab/internal/errwrap"
	"github.com/rivus/collab/internal/lockbackend"
	"github.com/rivus/collab/platform"
)

// emptyGrace is how long an empty lock file counts as held: another
// implementation may have crashed between creating it and writing the
// stamp, or be about to write it.
const emptyGrace = 30 * time.Second

// reclaimSuffix names the file whose flock admits one reclaimer at a time.
const reclaimSuffix = ".reclaim"

// fileBackend is the lock on a platform without SQLite: a file holding
// the holder's identity, created by linking a complete private file to
// the lock path, so no empty lock file is ever visible. A dead holder's
// file is reclaimed on the next attempt.
type fileBackend struct {
	p    *platform.Platform
	path string
}

// fileHeld is a taken lock file; stamp is what this process wrote.
type fileHeld struct {
	b     *fileBackend
	stamp []byte
}

// Attempt creates the lock file, reclaiming it first when its holder is
// dead on proof. self is never nil: Acquire fails before any attempt when
// the identity a lock file needs cannot be read.
func (b *fileBackend) Attempt(_ context.Context, self *platform.Identity, _ time.Duration) (held, error) {
	stamp := self.Marshal()
	for range 3 { // the file may vanish or be reclaimed between the steps
		err := b.p.FS.CreateExclusive(b.path, stamp, 0o644)
		if err == nil {
			return &fileHeld{b, stamp}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, errwrap.New("plock: create lock file "+b.path, err)
		}
		st, err := b.inspect()
		switch {
		case err != nil:
			return nil, err
		case st.free:
			continue
		case !st.reclaimable:
			return nil, &busyError{Holder: st.holder}
		}
		if err := b.reclaim(st.data); err != nil {
			return nil, err
		}
	}
	return nil, &busyError{}
}

// NeedsIdentity: a lock file is judged by the identity it holds.
func (b *fileBackend) NeedsIdentity() bool { return true }

// lockState is what inspecting a lock file found.
type lockState struct {
	data        []byte
	holder      *platform.Identity
	free        bool // the file is missing
	reclaimable bool // the holder is dead on proof, or the empty file is stale
}

// inspect reads and judges the lock file. A file it cannot parse is an
// error naming the file, and is left alone.
func (b *fileBackend) inspect() (lockState, error) {
	data, err := b.p.FS.ReadFile(b.path, platform.MaxIdentityJSON)
	if errors.Is(err, fs.ErrNotExist) {
		return lockState{free: true}, nil
	}
	if errors.Is(err, platform.ErrTooLarge) {
		return lockState{}, &StampError{Path: b.path, Err: err} // too long for an identity
	}
	if err != nil {
		return lockState{}, errwrap.New("plock: read lock file "+b.path, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return b.inspectEmpty(data)
	}
	id, err := platform.ParseIdentity(data)
	if err != nil {
		return lockState{}, &StampError{Path: b.path, Err: err}
	}
	return lockState{data: data, holder: &id, reclaimable: b.holderGone(id)}, nil
}

// holderGone tells whether a lock file's holder is dead on proof. Lock
// files live in local directories only, so a stamp of another boot id can
// only come from an earlier boot of this machine: its holder is gone. A
// stamp of this boot in another pid namespace (a container) cannot be
// judged, and holds.
func (b *fileBackend) holderGone(id platform.Identity) bool {
	switch b.p.Process.Judge(id).Liveness {
	case platform.Dead:
		return true
	case platform.Remote:
		self, err := b.p.Process.Self()
		return err == nil && self.BootID != id.BootID
	}
	return false
}

func (b *fileBackend) inspectEmpty(data []byte) (lockState, error) {
	info, err := b.p.FS.Stat(b.path)
	if errors.Is(err, fs.ErrNotExist) {
		return lockState{free: true}, nil
	}
	if err != nil {
		return lockState{}, errwrap.New("plock: stat lock file "+b.path, err)
	}
	age := b.p.GetClock().Now().Sub(info.ModTime())
	return lockState{data: data, reclaimable: age > emptyGrace}, nil
}

// reclaim removes a dead holder's lock file. One reclaimer at a time
// holds the reclaim flock; under it the file is re-read, and only the
// same stamp that was judged dead is renamed to a private name and removed.
func (b *fileBackend) reclaim(judged []byte) error {
	guard, err := b.p.FS.TryLock(b.path + reclaimSuffix)
	if errors.Is(err, platform.ErrLocked) {
		return &busyError{} // another process is reclaiming; it will take the lock
	}
	if err != nil {
		return errwrap.New("plock: lock "+b.path+reclaimSuffix, err)
	}
	defer guard.Unlock()
	data, err := b.p.FS.ReadFile(b.path, platform.MaxIdentityJSON)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // someone else reclaimed it already
	}
	if err != nil || !bytes.Equal(data, judged) {
		return &busyError{Holder: lockbackend.ReadHolder(b.p.FS, b.path)} // a new holder replaced it
	}
	if monitoring {
		b.reclaiming(judged)
	}
	private := platform.TempName(b.path)
	if err := b.p.FS.Rename(b.path, private); err != nil {
		return errwrap.New("plock: reclaim lock file "+b.path, err)
	}
	return lockbackend.RemoveIfExists(b.p.FS, private)
}

// Release removes the lock file if it still holds this process's stamp.
func (h *fileHeld) Release() error {
	data, err := h.b.p.FS.ReadFile(h.b.path, platform.MaxIdentityJSON)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !bytes.Equal(data, h.stamp) {
		return nil // reclaimed while held: nothing of ours to remove
	}
	if err != nil {
		return errwrap.New("plock: release lock file "+h.b.path, err)
	}
	return lockbackend.RemoveIfExists(h.b.p.FS, h.b.path)
}

// IsHeld judges the lock file's holder as an attempt does, and leaves a
// dead holder's file for the next acquisition to reclaim.
func (b *fileBackend) IsHeld(context.Context) (probed, error) {
	st, err := b.inspect()
	if err != nil {
		return probed{}, err
	}
	return probed{Held: !st.free && !st.reclaimable, Holder: st.holder}, nil
}
