package platform

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// procRoot is where the process table is read from.
const procRoot = "/proc"

// readTable reads what identifies this process table: the boot id and the
// pid namespace.
func readTable() (Identity, error) {
	boot, err := readProcFile(procRoot + "/sys/kernel/random/boot_id")
	if err != nil {
		return Identity{}, &SelfError{"boot id", err}
	}
	var st unix.Stat_t
	if err := unix.Stat(procRoot+"/self/ns/pid", &st); err != nil {
		return Identity{}, &SelfError{"pid namespace", err}
	}
	return Identity{BootID: strings.TrimSpace(string(boot)), PIDNamespace: st.Ino}, nil
}

func readSelf() (Identity, error) {
	id, err := readTable()
	if err != nil {
		return Identity{}, err
	}
	stat, err := readProcStat("self")
	if err != nil {
		return Identity{}, &SelfError{"/proc/self/stat", err}
	}
	host, err := os.Hostname()
	if err != nil {
		return Identity{}, &SelfError{"host name", err}
	}
	id.Host, id.PID, id.StartTime = host, stat.PID, stat.StartTime
	return id, id.Validate()
}

func readProcStat(pid string) (ProcStat, error) {
	line, err := readProcFile(procRoot + "/" + pid + "/stat")
	if err != nil {
		return ProcStat{}, err
	}
	return ParseProcStat(line)
}

// probePID reads /proc/<pid>/stat, and signals the pid only when the stat
// cannot be read (gone, or hidden by hidepid).
func probePID(pid int) PIDProbe {
	stat, err := readProcStat(strconv.Itoa(pid))
	if err == nil && stat.PID == pid {
		return PIDProbe{Seen: true, StartTime: stat.StartTime, Zombie: stat.Zombie()}
	}
	return signalProbe(pid)
}

// readProcFile reads a small file of /proc, as os.ReadFile does, with
// plain system calls: an *os.File would first set the descriptor
// non-blocking and offer it to the runtime's poller (which /proc files
// refuse), and set the poller up on the first file of the process. A
// command that judges itself once (collab lock) saves most of that
// work; one that probes a process table saves it on every pid.
func readProcFile(name string) ([]byte, error) {
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 512) // /proc/PID/stat is about 300 bytes
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		var n int
		err := ignoringEINTR(func() (err error) {
			n, err = unix.Read(fd, buf[len(buf):cap(buf)])
			return err
		})
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// ignoringEINTR calls f until it fails with anything but EINTR.
func ignoringEINTR(f func() error) error {
	for {
		if err := f(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
