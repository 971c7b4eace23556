//go:build unix

package sqlitelock

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/rivus/collab/platform"
	"golang.org/x/sys/unix"
)

// SQLite's lock bytes (os_unix.c): a holder of the exclusive lock has
// write locks on the pending, reserved and shared bytes; one taking it
// has a write lock on the pending byte first. As /proc/locks shows them: a
// holder (locking_mode=EXCLUSIVE, BEGIN EXCLUSIVE) "WRITE 1073741824
// 1073742335", all 512 bytes; a check in progress (a read transaction)
// "READ 1073741826 1073742335", the 510 shared bytes; a taker that waits
// for that check "WRITE 1073741824 1073741825", pending and reserved,
// beside its own read lock on the shared bytes.
const (
	PendingByte = 0x40000000
	LockBytes   = 2 + 510 // pending, reserved, shared
)

// probes holds one read-only descriptor for each lock database IsHeld, or
// an attempt's hint, has looked at, open for the life of the process.
// Closing a descriptor would drop every POSIX lock this process holds on
// the file, through any descriptor: an acquisition in this process,
// started after IsHeld asked the turns, could lose SQLite's lock that way.
// A descriptor whose file was replaced is retired, still open, while a
// task of this process holds or takes the lock, and closed otherwise.
var probes struct {
	sync.Mutex
	files   map[string]*os.File
	retired []*os.File
}

// LockHeld reports whether another process holds SQLite's lock on
// the database at path, or is taking it: a lock query (F_GETLK) on its
// lock bytes, which writes nothing and waits for nothing; and the pid the
// kernel names as holding it (0 when that process is on another process
// table). A missing file is not held. Locks of this process are
// invisible to the query: IsHeld asks the turns about them.
func LockHeld(path string, busyPath func(string) bool) (bool, int, error) {
	f, err := probeFile(path, busyPath)
	if errors.Is(err, fs.ErrPermission) {
		// Another user's private database (a root daemon's lock): the
		// kernel's table of locks, which anyone may read, says who holds
		// its lock bytes, where there is one (linux).
		if pids, lerr := platform.RecordLockHolders(path, PendingByte, PendingByte+LockBytes-1); lerr == nil {
			return len(pids) > 0, firstOr0(pids), nil
		}
	}
	if f == nil || err != nil {
		return false, 0, err
	}
	locked, pid, err := writeLockOwner(f)
	if err != nil {
		return false, 0, &fs.PathError{Op: "fcntl F_GETLK", Path: path, Err: err}
	}
	if locked {
		return true, pid, nil
	}
	// Free: say so only of a lock database, as an attempt through SQLite
	// would find it (an empty file is one not yet written).
	return false, 0, checkDatabase(f, path)
}

// writeLockOwner asks the kernel (F_GETLK) whether another process has a
// write lock on SQLite's lock bytes of f, and which (0 when that process
// is on another process table). The query is for a read lock, which only a
// write lock conflicts with: a check in progress holds a read lock on the
// shared bytes, and does not answer. Locks of this process never answer.
func writeLockOwner(f *os.File) (locked bool, pid int, err error) {
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0, Start: PendingByte, Len: LockBytes}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil {
		return false, 0, err
	}
	return lk.Type != unix.F_UNLCK, int(max(lk.Pid, 0)), nil
}

// sqliteWriteLocked is an attempt's hint: it reports whether another
// process has a write lock on SQLite's lock bytes of the database at path
// (it holds the lock, or is taking it), and which (its pid on this
// process table, or 0 if the kernel cannot tell), so that the attempt is refused
// without opening SQLite and waiting its busy timeout, which is for a
// check in progress. The descriptor is probeFile's: opened without
// following a link, kept open, and checked here to be a regular file.
// Anything else (no file yet, a failed query) answers false and leaves
// the answer to SQLite, as does a holder that comes after the query.
func sqliteWriteLocked(path string, busyPath func(string) bool) (bool, int) {
	f, err := probeFile(path, busyPath)
	if f == nil || err != nil {
		return false, 0
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false, 0
	}
	locked, pid, err := writeLockOwner(f)
	if !locked || err != nil {
		return false, 0
	}
	return true, pid
}

// firstOr0 returns the first of pids, or 0.
func firstOr0(pids []int) int {
	if len(pids) == 0 {
		return 0
	}
	return pids[0]
}

// sqliteHeader opens every SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

// ErrNotDatabase: the file at the lock path is not a SQLite database.
var ErrNotDatabase = errors.New("file is not a database")

// probeFile returns the probe descriptor of path, opening it if needed,
// or nil when path does not exist.
func probeFile(path string, busyPath func(string) bool) (*os.File, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	probes.Lock()
	defer probes.Unlock()
	if f := probes.files[path]; f != nil {
		if fst, err := f.Stat(); err == nil && os.SameFile(st, fst) {
			return f, nil
		}
		// The file was replaced. Its old descriptor may be closed unless
		// a task of this process holds or takes the lock, maybe on the
		// old file.
		if busyPath(path) {
			probes.retired = append(probes.retired, f)
		} else {
			f.Close()
		}
		delete(probes.files, path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if probes.files == nil {
		probes.files = map[string]*os.File{}
	}
	probes.files[path] = f
	return f, nil
}

// probeSupported: this platform answers IsHeld with a lock query.
const probeSupported = true
