//go:build unix

package torture

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// child is one running worker process.
type child struct {
	process int // its number in the history
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	log     *os.File
	done    chan struct{} // closed once reaped; err is then set
	err     error
	paused  bool
	resume  time.Time // when a paused child is continued
	stopped time.Time // when it was paused
	// stoppedAt is the monotonic clock before its SIGSTOP, for the
	// pauses file.
	stoppedAt time.Duration
}

// startChild starts worker process number p of cfg. A goroutine reaps
// it, closes done and reports it on exited (unless quit is closed).
func startChild(cfg Config, p int, exited chan<- *child, quit <-chan struct{}) (*child, error) {
	a := assignment{Dir: cfg.Dir, Store: cfg.Store, Seed: cfg.Seed, Process: p, Keys: cfg.Keys,
		TTL: cfg.TTL, Heartbeat: cfg.Heartbeat, PostgresURL: cfg.PostgresURL, Schema: cfg.PostgresSchema, Controller: os.Getpid()}
	if n := len(cfg.Policies); n > 0 {
		a.Policy = cfg.Policies[p%n]
	}
	a.NewPIDNamespace = inOwnPIDNamespace(cfg, p)
	a.Collab, a.CollabLock = cfg.Collab, cfg.CollabLock
	spec, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	command := cfg.Command
	if command == nil {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		command = []string{exe}
	}
	log, err := os.Create(procFile(cfg.Dir, logsDir, p, ".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = append(os.Environ(), EnvWorker+"="+string(spec), "GORACE=atexit_sleep_ms=0")
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group: a terminal's Ctrl-C reaches the controller,
	// which stops the workers itself, recorded.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if a.NewPIDNamespace {
		inNewPIDNamespace(cmd.SysProcAttr)
	}
	stdin, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		_ = log.Close()
		return nil, err
	}
	c := &child{process: p, cmd: cmd, stdin: stdin, log: log, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		_ = log.Close()
		close(c.done)
		select {
		case exited <- c:
		case <-quit:
		}
	}()
	return c, nil
}

// inOwnPIDNamespace reports whether worker process p of cfg runs in a
// pid namespace of its own: PIDNamespaces of every Workers in turn.
func inOwnPIDNamespace(cfg Config, p int) bool { return (p-1)%cfg.Workers < cfg.PIDNamespaces }

// kill sends SIGKILL, and SIGCONT in case it is stopped.
func (c *child) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Process.Signal(syscall.SIGCONT)
}

func (c *child) stop() error { return c.cmd.Process.Signal(syscall.SIGSTOP) }
func (c *child) cont() error { return c.cmd.Process.Signal(syscall.SIGCONT) }
