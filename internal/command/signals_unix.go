//go:build !windows

package command

import (
	"os"
	"syscall"
)

// ForwardedSignals reach the locked command instead of ending collab
// first, which would drop the lock while the command still runs.
var ForwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// terminateSignal asks a child to end.
var terminateSignal os.Signal = syscall.SIGTERM
