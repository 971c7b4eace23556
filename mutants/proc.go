package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	osexec "os/exec"
	"time"
)

// ran is the outcome of one bounded command.
type ran struct {
	stdout, stderr string
	code           int  // the exit status; -1 if it did not exit normally
	timedOut       bool // the time bound passed, or the run was interrupted, and the command was stopped
	interrupted    bool // the run was interrupted
	startErr       error
	took           time.Duration
}

// graceDelay is how long a command has to end after SIGINT, once its time
// bound passed, before its process group is killed.
const graceDelay = 15 * time.Second

// runBounded runs name in dir with extra environment variables, in a
// process group of its own, stopped after limit: SIGINT to the group,
// then SIGKILL to it graceDelay later. The parent's interrupt stops it
// the same way.
func runBounded(parent context.Context, dir string, env []string, limit time.Duration, name string, args ...string) ran {
	ctx, cancel := context.WithTimeout(parent, limit)
	defer cancel()
	cmd := osexec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ownGroup(cmd)
	cmd.Cancel = func() error { return signalGroup(cmd, false) }
	cmd.WaitDelay = graceDelay
	start := time.Now()
	err := cmd.Run()
	r := ran{took: time.Since(start), code: -1}
	if ctx.Err() != nil {
		r.timedOut, r.interrupted = true, parent.Err() != nil
		_ = signalGroup(cmd, true) // whatever of the group outlived its leader
	}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	var exit *osexec.ExitError
	switch {
	case err == nil:
		r.code = 0
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case cmd.ProcessState != nil:
		r.code = cmd.ProcessState.ExitCode()
	default:
		r.startErr = err
	}
	return r
}
