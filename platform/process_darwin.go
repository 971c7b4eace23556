package platform

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// sZomb is darwin's p_stat of a zombie (sys/proc.h SZOMB).
const sZomb = 5

// readTable reads what identifies this process table: the boot id (darwin
// has no pid namespaces).
func readTable() (Identity, error) {
	boot, err := readBootID()
	return Identity{BootID: boot}, err
}

// readBootID reads kern.bootsessionuuid, or derives an id from
// kern.boottime on systems that lack it.
func readBootID() (string, error) {
	if id, err := unix.Sysctl("kern.bootsessionuuid"); err == nil && id != "" {
		return id, nil
	}
	tv, err := unix.SysctlTimeval("kern.boottime")
	if err != nil {
		return "", &SelfError{"kern.boottime", err}
	}
	usec := strconv.FormatInt(int64(tv.Usec), 10)
	return "boottime-" + strconv.FormatInt(tv.Sec, 10) + "." + "000000"[min(len(usec), 6):] + usec, nil
}

func readSelf() (Identity, error) {
	boot, err := readBootID()
	if err != nil {
		return Identity{}, err
	}
	pid := os.Getpid()
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return Identity{}, &SelfError{"kern.proc.pid", err}
	}
	host, err := os.Hostname()
	if err != nil {
		return Identity{}, &SelfError{"host name", err}
	}
	id := Identity{Host: host, BootID: boot, PID: pid, StartTime: startMicros(kp)}
	return id, id.Validate()
}

func startMicros(kp *unix.KinfoProc) uint64 {
	tv := kp.Proc.P_starttime
	return uint64(tv.Sec)*1_000_000 + uint64(tv.Usec)
}

func probePID(pid int) PIDProbe {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err == nil && int(kp.Proc.P_pid) == pid {
		return PIDProbe{Seen: true, StartTime: startMicros(kp), Zombie: kp.Proc.P_stat == sZomb}
	}
	return signalProbe(pid)
}
