package platform

import (
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
	boot, err := os.ReadFile(procRoot + "/sys/kernel/random/boot_id")
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
	line, err := os.ReadFile(procRoot + "/" + pid + "/stat")
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
