package platformtest

import (
	"sync/atomic"

	"github.com/rivus/collab/platform"
)

// CountingProcess wraps a process table and counts the calls made to it,
// for tests that require a code path to read no identity or judge no
// holder.
type CountingProcess struct {
	platform.Process
	SelfCalls, JudgeCalls atomic.Int64
}

// Self counts the call and asks the wrapped table.
func (p *CountingProcess) Self() (platform.Identity, error) {
	p.SelfCalls.Add(1)
	return p.Process.Self()
}

// Judge counts the call and asks the wrapped table.
func (p *CountingProcess) Judge(id platform.Identity) platform.Verdict {
	p.JudgeCalls.Add(1)
	return p.Process.Judge(id)
}

// Calls returns how many calls of either kind were made.
func (p *CountingProcess) Calls() int64 { return p.SelfCalls.Load() + p.JudgeCalls.Load() }
