package platform

import "strconv"

// Liveness is a judgement of whether the process an Identity names runs.
type Liveness uint8

const (
	// Unknown means no proof either way (the process could not be
	// inspected). Callers treat it as alive.
	Unknown Liveness = iota
	// Alive means the process runs: its pid exists with the same start
	// time, or exists and may not be inspected (EPERM).
	Alive
	// Dead means proof that the process is gone: the pid does not exist,
	// is a zombie, or belongs to a process with another start time.
	Dead
	// Remote means the identity lives in another process table (another
	// boot or pid namespace); only a time-to-live can judge it.
	Remote
)

func (l Liveness) String() string {
	switch l {
	case Unknown:
		return "unknown"
	case Alive:
		return "alive"
	case Dead:
		return "dead"
	case Remote:
		return "remote"
	}
	return "Liveness(" + strconv.Itoa(int(l)) + ")"
}

// Verdict is a Liveness with the evidence behind it, for logs.
type Verdict struct {
	Liveness Liveness
	Reason   string
}

// PIDProbe is what a process table says about one pid. Process
// implementations gather it; Judge turns it into a Verdict.
type PIDProbe struct {
	// Gone: the kernel proved that no process has the pid (ESRCH).
	Gone bool
	// Denied: a process has the pid, but we may not signal it (EPERM).
	Denied bool
	// Seen: State and StartTime were read.
	Seen      bool
	StartTime uint64
	Zombie    bool
}

// Judge decides the liveness of holder as seen from a process whose
// process table is that of table (only its BootID and PIDNamespace are
// read). probe is called only when the two share a process table.
func Judge(table, holder Identity, probe func(pid int) PIDProbe) Verdict {
	if !table.SameProcessTable(holder) {
		return Verdict{Remote, "another process table (boot " + shortBoot(holder.BootID) + ", pid namespace " + strconv.FormatUint(holder.PIDNamespace, 10) + ")"}
	}
	switch {
	case holder.PID <= 0: // kill(2) would address a process group
		return Verdict{Unknown, strconv.Itoa(holder.PID) + " is not a process id"}
	case holder.PID > maxPID: // kill(2) and sysctl would truncate it to another pid
		return Verdict{Dead, "no process can have pid " + strconv.Itoa(holder.PID)}
	}
	p := probe(holder.PID)
	switch {
	case p.Gone:
		return Verdict{Dead, "no process has pid " + strconv.Itoa(holder.PID)}
	case p.Seen && p.Zombie:
		return Verdict{Dead, "pid " + strconv.Itoa(holder.PID) + " is a zombie"}
	case p.Seen && p.StartTime != holder.StartTime:
		return Verdict{Dead, "pid " + strconv.Itoa(holder.PID) + " now belongs to another process (start time " + strconv.FormatUint(p.StartTime, 10) + ", holder's " + strconv.FormatUint(holder.StartTime, 10) + ")"}
	case p.Seen:
		return Verdict{Alive, "pid " + strconv.Itoa(holder.PID) + " runs with the holder's start time"}
	case p.Denied:
		return Verdict{Alive, "pid " + strconv.Itoa(holder.PID) + " exists (not ours to signal)"}
	}
	return Verdict{Unknown, "pid " + strconv.Itoa(holder.PID) + " cannot be inspected"}
}
