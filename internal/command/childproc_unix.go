//go:build linux || darwin

package command

import (
	"io"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// startChild starts cmd so that it cannot outlive the lock or lease it
// runs under: in a process group of its own, which signalChild signals
// whole (a shell's background jobs with it), and, on linux, killed with
// SIGKILL if collab dies (procAttr). A command whose standard
// input is a terminal keeps collab's process group, so that it can read
// the terminal and job control works; only it, not its own children, is
// then signalled.
func startChild(cmd *exec.Cmd, stdin io.Reader) (ownGroup bool, err error) {
	ownGroup = !isTerminal(stdin)
	cmd.SysProcAttr = procAttr(ownGroup)
	return ownGroup, cmd.Start()
}

// signalChild sends sig to the child, and to its whole process group when
// it leads one.
func signalChild(cmd *exec.Cmd, ownGroup bool, sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok && ownGroup {
		_ = syscall.Kill(-cmd.Process.Pid, s)
		return
	}
	_ = cmd.Process.Signal(sig)
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}

// passesFiles: a child inherits exec.Cmd's ExtraFiles.
const passesFiles = true

// inheritedFile returns descriptor n as a file if it is an open regular
// file, judged on the raw descriptor first: an *os.File made of a
// descriptor that is not open would close it when collected, whatever it
// had become by then.
func inheritedFile(n int) *os.File {
	var st unix.Stat_t
	if unix.Fstat(n, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	return os.NewFile(uintptr(n), "inherited guard")
}
