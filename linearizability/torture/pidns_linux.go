package torture

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// pidNamespaces: a worker can run in a pid namespace of its own, as root.
const pidNamespaces = true

// inNewPIDNamespace asks that the child start in a pid namespace of its
// own, where it is process 1, and a mount namespace of its own, where it
// mounts a /proc of its pid namespace: as in a container, it then knows
// itself by the pid its namespace gives it, which means another process
// to this process table.
func inNewPIDNamespace(attr *syscall.SysProcAttr) {
	attr.Cloneflags |= syscall.CLONE_NEWPID | syscall.CLONE_NEWNS
}

// startedInNewPIDNamespace reports whether this process is process 1 of
// a pid namespace whose parent is outside it (getppid is 0): how a worker
// started so finds itself, as its parent's pid cannot be seen. It then
// mounts its namespace's /proc, privately, and handles SIGCONT: process 1
// gets only the signals it handles from its ancestors, SIGKILL and
// SIGSTOP aside, and a pause must end.
func startedInNewPIDNamespace() (bool, error) {
	if os.Getpid() != 1 || os.Getppid() != 0 {
		return false, nil
	}
	// Nothing mounted here may reach the parent's mount namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return true, fmt.Errorf("torture: making the mounts of a new pid namespace private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return true, fmt.Errorf("torture: mounting the /proc of a new pid namespace: %w", err)
	}
	signal.Notify(make(chan os.Signal, 1), syscall.SIGCONT)
	return true, nil
}
