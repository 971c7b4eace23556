//go:build unix

package torture

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PGServer makes the faults of a local PostgreSQL server with pg_ctl
// and signals. It is a ServerFaults.
type PGServer struct {
	// PgCtl is the pg_ctl program (FindPgCtl finds it).
	PgCtl string
	// Data is the server's data directory.
	Data string
	// User, if set and not the current user, is who runs pg_ctl (with
	// su; the server refuses to run as root).
	User string
	// Log is the server's log when it starts again (default: the file
	// postgres.log beside the data directory).
	Log string

	paused int // the postmaster's pid while paused
}

var _ ServerFaults = (*PGServer)(nil)

// pgCtlTimeout bounds pg_ctl's waits for the server to stop or start.
const pgCtlTimeout = 60 * time.Second

// FindPgCtl returns the pg_ctl program: in a Debian version directory
// (which is not on PATH) or else on PATH.
func FindPgCtl() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	for _, p := range dirs {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath("pg_ctl")
}

// Stop stops the server at once (pg_ctl stop -m immediate).
func (s *PGServer) Stop() error {
	return s.pgCtl("-m", "immediate", "stop")
}

// Start starts the server with the options of its last start
// (pg_ctl restart, which reads postmaster.opts, starts a stopped server).
func (s *PGServer) Start() error {
	log := s.Log
	if log == "" {
		log = filepath.Join(filepath.Dir(filepath.Clean(s.Data)), "postgres.log")
	}
	return s.pgCtl("-l", log, "restart")
}

// Pause sends SIGSTOP to the postmaster.
func (s *PGServer) Pause() error {
	pid, err := s.postmaster()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("SIGSTOP to postmaster %d: %w", pid, err)
	}
	s.paused = pid
	return nil
}

// Resume sends SIGCONT to the postmaster Pause stopped.
func (s *PGServer) Resume() error {
	if s.paused == 0 {
		return nil
	}
	if err := syscall.Kill(s.paused, syscall.SIGCONT); err != nil {
		return fmt.Errorf("SIGCONT to postmaster %d: %w", s.paused, err)
	}
	s.paused = 0
	return nil
}

// postmaster returns the pid on the first line of postmaster.pid.
func (s *PGServer) postmaster() (int, error) {
	path := filepath.Join(s.Data, "postmaster.pid")
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s: first line %q is not a pid", path, line)
	}
	return pid, nil
}

// pgCtl runs pg_ctl -D Data -w -t ... with args, as User if set.
func (s *PGServer) pgCtl(args ...string) error {
	argv := append([]string{s.PgCtl, "-D", s.Data, "-w", "-t", strconv.Itoa(int(pgCtlTimeout / time.Second))}, args...)
	var cmd *exec.Cmd
	if s.User != "" && !isUser(s.User) {
		quoted := make([]string, len(argv))
		for i, a := range argv {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		cmd = exec.Command("su", s.User, "-s", "/bin/sh", "-c", strings.Join(quoted, " "))
	} else {
		cmd = exec.Command(argv[0], argv[1:]...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// isUser reports whether this process runs as the user name.
func isUser(name string) bool {
	u, err := user.Current()
	return err == nil && u.Username == name
}
