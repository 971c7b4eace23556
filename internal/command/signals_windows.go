package command

import "os"

// ForwardedSignals reach the locked command instead of ending collab.
var ForwardedSignals = []os.Signal{os.Interrupt}

// terminateSignal asks a child to end; windows has no SIGTERM, so it is
// killed at once.
var terminateSignal os.Signal = os.Kill
