//go:build unix

package main

import (
	osexec "os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that stopping it
// stops what it started (go test's test binaries, for one).
func ownGroup(cmd *osexec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends SIGINT (or SIGKILL) to cmd's process group.
func signalGroup(cmd *osexec.Cmd, kill bool) error {
	if cmd.Process == nil {
		return nil
	}
	sig := syscall.SIGINT
	if kill {
		sig = syscall.SIGKILL
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}
