package platform

import (
	"encoding/binary"
	"io/fs"
	"os"
	"sync"
	"time"

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
// that lives while anything is watched: its reader goroutine ends soon
// after the last watch, so that none is left behind. The kernel's side
// of ending a watch or an instance waits for its readers to quiesce
// (about 16 ms here): stop leaves both to the reader goroutine, so that
// a caller that stops a watch does not wait for them.
var watches inotifyWatches

type inotifyWatches struct {
	mu   sync.Mutex
	file *os.File          // the instance, in the runtime's poller; nil when nothing is watched
	byWD map[int32]wakeSet // the watches of each watch descriptor
}

// watchEvents are the events that wake a watch: a write.
const watchEvents = unix.IN_MODIFY | unix.IN_DONT_FOLLOW

func (w *inotifyWatches) add(name string) (<-chan struct{}, func(), error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.file == nil {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			return nil, nil, &fs.PathError{Op: "watch", Path: name, Err: err}
		}
		w.file, w.byWD = os.NewFile(uintptr(fd), "inotify"), map[int32]wakeSet{}
		go w.read(w.file)
	}
	var wd int
	err := control(w.file, func(fd int) (err error) {
		wd, err = unix.InotifyAddWatch(fd, name, watchEvents)
		return err
	})
	if err != nil {
		w.endIfIdleLocked()
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

// remove ends the watch c of wd, and the instance with the last watch.
// The kernel's watch of wd stays until the instance ends: it is cheap,
// and a later watch of the same file gets it again.
func (w *inotifyWatches) remove(wd int32, c chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if set := w.byWD[wd]; set != nil {
		delete(set, c)
		if len(set) == 0 {
			delete(w.byWD, wd)
		}
	}
	w.endIfIdleLocked()
}

// endIfIdleLocked detaches the instance if nothing is watched, and ends
// its reader's Read at once (a deadline passed), so that the reader
// closes it: a new watch meanwhile starts a new instance.
func (w *inotifyWatches) endIfIdleLocked() {
	if w.file == nil || len(w.byWD) != 0 {
		return
	}
	_ = w.file.SetReadDeadline(time.Now())
	w.file, w.byWD = nil, nil
}

// read wakes the watches of each event read from f until f is detached
// or fails; then it closes f.
func (w *inotifyWatches) read(f *os.File) {
	defer f.Close()
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := f.Read(buf)
		w.mu.Lock()
		if w.file != f { // detached
			w.mu.Unlock()
			return
		}
		if err != nil { // wake everyone, who poll from now on, and start anew
			for _, set := range w.byWD {
				set.wakeAll()
			}
			w.file, w.byWD = nil, nil
			w.mu.Unlock()
			return
		}
		w.dispatchLocked(buf[:n])
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
