package platform

import (
	"bufio"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// FlockHolders returns the pids of the processes that hold a flock(2) on
// the file at name, from the kernel's table of locks (/proc/locks), for
// people to read: a pid there is the process that took the lock, which
// may have passed its descriptor on and ended since. It follows no link
// at name. Where the kernel has no such table (not linux), it fails with
// errors.ErrUnsupported.
func FlockHolders(name string) ([]int, error) {
	return lockHolders(name, "FLOCK", 0, -1)
}

// RecordLockHolders returns the pids of the processes that hold a POSIX
// record lock (fcntl) on bytes start to end of the file at name, as the
// kernel's table lists them, which anyone may read: a user who may not
// open the file learns who holds it. Where the kernel has no such table
// (not linux), it fails with errors.ErrUnsupported.
func RecordLockHolders(name string, start, end int64) ([]int, error) {
	return lockHolders(name, "POSIX", start, end)
}

// lockHolders reads /proc/locks for the locks of kind on name; for
// POSIX, those overlapping start to end.
func lockHolders(name, kind string, start, end int64) ([]int, error) {
	var st unix.Stat_t
	if err := unix.Lstat(name, &st); err != nil {
		return nil, &os.PathError{Op: "lstat", Path: name, Err: err}
	}
	want := hex2(unix.Major(st.Dev)) + ":" + hex2(unix.Minor(st.Dev)) + ":" + strconv.FormatUint(st.Ino, 10)
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseLocks(f, kind, want, start, end)
}

// parseLocks reads a table of locks in the form of /proc/locks and
// returns the pids that hold a lock of kind on the file want
// ("major:minor:inode", in hex and decimal as the table writes it),
// overlapping start to end for POSIX locks. Lines of another form are
// skipped.
func parseLocks(r io.Reader, kind, want string, start, end int64) ([]int, error) {
	var pids []int
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 fd:00:5678 0 EOF"; a waiter's
		// line has "->" after the number, and is not a holder.
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || fields[1] != kind || fields[5] != want {
			continue
		}
		if kind == "POSIX" && !overlaps(fields[6], fields[7], start, end) {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil && pid > 0 && !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	return pids, sc.Err()
}

// overlaps reports whether the locked range from to (a number or EOF)
// overlaps start to end.
func overlaps(from, to string, start, end int64) bool {
	lo, err := strconv.ParseInt(from, 10, 64)
	if err != nil {
		return false
	}
	if to == "EOF" {
		return lo <= end
	}
	hi, err := strconv.ParseInt(to, 10, 64)
	return err == nil && lo <= end && hi >= start
}

// hex2 is v in hexadecimal, at least two digits: /proc/locks' form of a
// device number.
func hex2(v uint32) string {
	s := strconv.FormatUint(uint64(v), 16)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}
