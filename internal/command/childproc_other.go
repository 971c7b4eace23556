//go:build !linux && !darwin

package command

import (
	"io"
	"os"
	"os/exec"
)

// startChild starts cmd. Windows has no process groups to signal as
// collab uses them, nor a parent-death signal: a command whose collab is
// killed runs on (README, Platforms and limits).
func startChild(cmd *exec.Cmd, _ io.Reader) (bool, error) { return false, cmd.Start() }

// signalChild sends sig to the child alone.
func signalChild(cmd *exec.Cmd, _ bool, sig os.Signal) { _ = cmd.Process.Signal(sig) }

// passesFiles: windows passes no descriptors beyond the standard three to
// a child, so a lock's guard is not inherited there.
const passesFiles = false

// inheritedFile: no descriptors are inherited here.
func inheritedFile(int) *os.File { return nil }
