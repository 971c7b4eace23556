//go:build !windows

package childproc

import (
	"os"
	"syscall"
)

func resume(p *os.Process) error { return p.Signal(syscall.SIGCONT) }
