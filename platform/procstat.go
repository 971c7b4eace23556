package platform

import (
	"bytes"
	"strconv"
)

// ProcStat is what collab reads from a Linux /proc/<pid>/stat line.
type ProcStat struct {
	PID       int
	Comm      string // the command name, which may hold spaces, ')' and newlines
	State     byte   // 'R', 'S', 'Z', ...
	StartTime uint64 // field 22: clock ticks after boot
}

// Zombie reports whether the process has exited and awaits reaping.
func (s ProcStat) Zombie() bool { return s.State == 'Z' || s.State == 'X' || s.State == 'x' }

// ProcStatError reports a /proc/<pid>/stat line that cannot be parsed.
type ProcStatError struct {
	Reason string
}

func (e *ProcStatError) Error() string { return "platform: malformed /proc stat line: " + e.Reason }

// startTimeField is the 1-based index of starttime in proc(5).
const startTimeField = 22

// ParseProcStat parses one /proc/<pid>/stat line. The command name is
// found between the first '(' and the last ')', since it may itself hold
// parentheses, spaces and newlines; the numeric fields follow the last ')'.
func ParseProcStat(line []byte) (ProcStat, error) {
	open := bytes.IndexByte(line, '(')
	closing := bytes.LastIndexByte(line, ')')
	if open < 0 || closing < open {
		return ProcStat{}, &ProcStatError{"no parenthesised command name"}
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(line[:open])))
	if err != nil || pid <= 0 {
		return ProcStat{}, &ProcStatError{"bad pid " + strconv.Quote(string(bytes.TrimSpace(line[:open])))}
	}
	// Fields 3.. follow the command name.
	rest := bytes.Fields(line[closing+1:])
	const first = 3
	if len(rest) < startTimeField-first+1 {
		return ProcStat{}, &ProcStatError{strconv.Itoa(len(rest)) + " fields after the command name, want at least " + strconv.Itoa(startTimeField-first+1)}
	}
	if len(rest[0]) != 1 {
		return ProcStat{}, &ProcStatError{"bad state " + strconv.Quote(string(rest[0]))}
	}
	start, err := strconv.ParseUint(string(rest[startTimeField-first]), 10, 64)
	if err != nil {
		return ProcStat{}, &ProcStatError{"bad start time " + strconv.Quote(string(rest[startTimeField-first]))}
	}
	return ProcStat{PID: pid, Comm: string(line[open+1 : closing]), State: rest[0][0], StartTime: start}, nil
}
