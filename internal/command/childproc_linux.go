package command

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// procAttr starts the command in a process group of its own if ownGroup,
// and has the kernel kill it with SIGKILL when collab dies, even by
// SIGKILL: it sends the signal when the thread that started the command
// ends, so Supervise keeps its goroutine on that thread.
func procAttr(ownGroup bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: ownGroup, Pdeathsig: syscall.SIGKILL}
}

const ioctlGetTermios = unix.TCGETS
