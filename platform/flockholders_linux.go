package platform

import (
	"bufio"
	"fmt"
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
// at name. Where the kernel has no such table (not linux), it returns
// nil.
func FlockHolders(name string) ([]int, error) {
	var st unix.Stat_t
	if err := unix.Lstat(name, &st); err != nil {
		return nil, &os.PathError{Op: "lstat", Path: name, Err: err}
	}
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 fd:00:5678 0 EOF"; a waiter's
		// line has "->" after the number.
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil && !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	return pids, sc.Err()
}
