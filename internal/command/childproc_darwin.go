package command

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// procAttr starts the command in a process group of its own if ownGroup.
// Darwin has no parent-death signal: a command whose collab is killed
// with SIGKILL runs on (README, Platforms and limits).
func procAttr(ownGroup bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: ownGroup}
}

const ioctlGetTermios = unix.TIOCGETA
