package platformtest

import (
	"fmt"
	"sync"

	"github.com/rivus/collab/platform"
)

// Processes is a fake process table of one host, safe for concurrent use.
// A test starts processes, kills them (leaving zombies), reaps them, gives
// their pids to new processes, hides them (as hidepid does), renames the
// host and reboots it. Its Self is one process of the table; As gives the
// view of another.
type Processes struct {
	mu      sync.Mutex
	host    string
	bootID  string
	boots   int
	ns      uint64
	procs   map[int]*proc
	nextPID int
	ticks   uint64 // start times grow with every start, like clock ticks
	self    int
	selfErr error
}

type proc struct {
	start  uint64
	zombie bool
	hidden bool // unreadable, as under hidepid
	denied bool // signalling it fails with EPERM
}

var _ platform.Process = (*Processes)(nil)

// NewProcesses returns a table on host "testhost" holding one running
// process, which is Self.
func NewProcesses() *Processes {
	p := &Processes{host: "testhost", bootID: "boot-1", boots: 1, ns: 4026531836, procs: map[int]*proc{}, nextPID: 1000}
	p.self = p.Start().PID
	return p
}

// Start runs a new process and returns its identity.
func (p *Processes) Start() platform.Identity {
	p.mu.Lock()
	defer p.mu.Unlock()
	pid := p.nextPID
	p.nextPID++
	return p.startLocked(pid)
}

func (p *Processes) startLocked(pid int) platform.Identity {
	p.ticks += 100
	p.procs[pid] = &proc{start: p.ticks}
	return p.identityLocked(pid)
}

// Kill ends the process with pid, leaving a zombie until Reap.
func (p *Processes) Kill(pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mustLocked(pid).zombie = true
}

// Reap removes the process with pid from the table: its pid is gone.
func (p *Processes) Reap(pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mustLocked(pid)
	delete(p.procs, pid)
}

// Reuse gives pid to a new process with a later start time, whatever
// held it before, and returns the new identity.
func (p *Processes) Reuse(pid int) platform.Identity {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.startLocked(pid)
}

// Hide makes the process with pid unreadable, as hidepid does, and
// unsignalable (EPERM) when denied is true; when false it can be neither
// read nor signalled with any answer, and is judged Unknown.
func (p *Processes) Hide(pid int, denied bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.mustLocked(pid)
	pr.hidden, pr.denied = true, denied
}

// SetHost renames the host. Judgements do not change: the host name is
// for people to read.
func (p *Processes) SetHost(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.host = name
}

// Reboot gives the host a new boot id and an empty table but for Self,
// which restarts with a new identity (as the test's process would).
func (p *Processes) Reboot() platform.Identity {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.boots++
	p.bootID = fmt.Sprintf("boot-%d", p.boots)
	p.procs = map[int]*proc{}
	return p.startLocked(p.self)
}

// FailSelf makes Self fail with err (nil restores it), as a sandbox that
// denies /proc or sysctl does.
func (p *Processes) FailSelf(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.selfErr = err
}

// Self returns the identity of the table's own process.
func (p *Processes) Self() (platform.Identity, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.selfErr != nil {
		return platform.Identity{}, &platform.SelfError{What: "fake process table", Err: p.selfErr}
	}
	return p.identityLocked(p.self), nil
}

// Judge judges holder with platform.Judge, from this table.
func (p *Processes) Judge(holder platform.Identity) platform.Verdict {
	p.mu.Lock()
	defer p.mu.Unlock()
	table := platform.Identity{BootID: p.bootID, PIDNamespace: p.ns}
	return platform.Judge(table, holder, p.probeLocked)
}

// As returns the view of the process id names: its Self is id, and it
// judges from this table. Tests use it to play several processes.
func (p *Processes) As(id platform.Identity) platform.Process {
	return view{p, id}
}

// Identity returns the current identity of the process with pid.
func (p *Processes) Identity(pid int) platform.Identity {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mustLocked(pid)
	return p.identityLocked(pid)
}

func (p *Processes) probeLocked(pid int) platform.PIDProbe {
	pr, ok := p.procs[pid]
	switch {
	case !ok:
		return platform.PIDProbe{Gone: true}
	case pr.hidden && pr.denied:
		return platform.PIDProbe{Denied: true}
	case pr.hidden:
		return platform.PIDProbe{}
	}
	return platform.PIDProbe{Seen: true, StartTime: pr.start, Zombie: pr.zombie}
}

func (p *Processes) identityLocked(pid int) platform.Identity {
	return platform.Identity{Host: p.host, BootID: p.bootID, PID: pid, StartTime: p.procs[pid].start, PIDNamespace: p.ns}
}

func (p *Processes) mustLocked(pid int) *proc {
	pr, ok := p.procs[pid]
	if !ok {
		panic(fmt.Sprintf("platformtest: no process %d", pid))
	}
	return pr
}

type view struct {
	table *Processes
	self  platform.Identity
}

func (v view) Self() (platform.Identity, error)           { return v.self, nil }
func (v view) Judge(h platform.Identity) platform.Verdict { return v.table.Judge(h) }
