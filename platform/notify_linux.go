package platform

import (
	"encoding/binary"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

var _ Notifier = osFS{}

// Notify writes a byte into name, which wakes its inotify watches.
func (osFS) Notify(name string) error { return notifyFile(name) }

// Watch watches name with the process's inotify instance.
func (osFS) Watch(name string) (<-chan struct{}, func(), error) {
	f, err := openNotified(name)
	if err != nil {
		return nil, nil, err
	}
	f.Close()
	return watches.add(name)
}

// watches are the process's inotify watches, on one inotify instance
// that lives while anything is watched: its reader goroutine ends with
// the last watch, so that none is left behind.
var watches inotifyWatches

type inotifyWatches struct {
	mu   sync.Mutex
	file *os.File          // the instance, in the runtime's poller; nil when nothing is watched
	done chan struct{}     // closed when file's reader has returned
	byWD map[int32]wakeSet // the watches of each watch descriptor
}

// watchEvents are the events that wake a watch: a write, and the end of
// the watch (the file removed), so that no watcher waits on a file gone.
const watchEvents = unix.IN_MODIFY | unix.IN_DONT_FOLLOW

func (w *inotifyWatches) add(name string) (<-chan struct{}, func(), error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.file == nil {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			return nil, nil, &fs.PathError{Op: "watch", Path: name, Err: err}
		}
		w.file, w.done, w.byWD = os.NewFile(uintptr(fd), "inotify"), make(chan struct{}), map[int32]wakeSet{}
		go w.read(w.file, w.done)
	}
	var wd int
	err := control(w.file, func(fd int) (err error) {
		wd, err = unix.InotifyAddWatch(fd, name, watchEvents)
		return err
	})
	if err != nil {
		w.closeIfIdleLocked()
		return nil, nil, &fs.PathError{Op: "watch", Path: name, Err: err}
	}
	c := make(chan struct{}, 1)
	set := w.byWD[int32(wd)]
	if set == nil {
		set = wakeSet{}
		w.byWD[int32(wd)] = set
	}
	set[c] = struct{}{}
	return c, stopOnce(func() { w.remove(int32(wd), c) }), nil
}

// remove ends the watch c of wd, and the instance with the last watch,
// waiting for its reader to return.
func (w *inotifyWatches) remove(wd int32, c chan struct{}) {
	w.mu.Lock()
	set := w.byWD[wd]
	delete(set, c)
	if len(set) == 0 && set != nil {
		delete(w.byWD, wd)
		_ = control(w.file, func(fd int) error {
			_, err := unix.InotifyRmWatch(fd, uint32(wd))
			return err // EINVAL: the kernel ended it already (the file was removed)
		})
	}
	done := w.closeIfIdleLocked()
	w.mu.Unlock()
	if done != nil {
		<-done
	}
}

// closeIfIdleLocked closes the instance if nothing is watched, and
// returns the channel its reader closes when it returns, or nil.
func (w *inotifyWatches) closeIfIdleLocked() chan struct{} {
	if w.file == nil || len(w.byWD) != 0 {
		return nil
	}
	done := w.done
	w.file.Close() // ends the reader's Read
	w.file, w.done, w.byWD = nil, nil, nil
	return done
}

// read wakes the watches of each event read from f until f is closed.
func (w *inotifyWatches) read(f *os.File, done chan struct{}) {
	defer close(done)
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := f.Read(buf)
		if err != nil {
			return
		}
		w.mu.Lock()
		if w.file == f {
			w.dispatchLocked(buf[:n])
		}
		w.mu.Unlock()
	}
}

// dispatchLocked wakes the watches of the events in buf.
func (w *inotifyWatches) dispatchLocked(buf []byte) {
	for len(buf) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(buf[0:4]))
		mask := binary.NativeEndian.Uint32(buf[4:8])
		size := unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(buf[12:16]))
		buf = buf[min(size, len(buf)):]
		if mask&unix.IN_Q_OVERFLOW != 0 { // events were lost: wake everyone
			for _, set := range w.byWD {
				set.wakeAll()
			}
			continue
		}
		w.byWD[wd].wakeAll()
	}
}

// control runs fn on f's descriptor, which stays in the runtime's
// poller (f.Fd would make it blocking).
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
