//go:build linux || darwin

package platform

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// osProcess identifies processes through the kernel; readSelf,
// readTable and probePID are the operating system's own.
type osProcess struct {
	self func() (Identity, error)
}

// OSProcess returns the Process of the running operating system.
func OSProcess() Process { return osProcessValue() }

var osProcessValue = sync.OnceValue(func() Process {
	return &osProcess{self: sync.OnceValues(readSelf)}
})

func (p *osProcess) Self() (Identity, error) { return p.self() }

func (p *osProcess) Judge(holder Identity) Verdict {
	table, err := readTable()
	if err != nil {
		return Verdict{Unknown, "own process table unreadable: " + err.Error()}
	}
	return Judge(table, holder, probePID)
}

// signalProbe asks the kernel whether pid exists with a null signal.
func signalProbe(pid int) PIDProbe {
	switch err := unix.Kill(pid, 0); {
	case errors.Is(err, unix.ESRCH):
		return PIDProbe{Gone: true}
	case errors.Is(err, unix.EPERM):
		return PIDProbe{Denied: true}
	}
	return PIDProbe{}
}
