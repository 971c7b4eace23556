package lease

import (
	"fmt"
	"strings"

	"github.com/rivus/collab/internal/contract"
	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/policy"
)

// The contract monitor checks, on every step of one handle, the duties the
// manager owes the lease policy (the lease family's doc): one repository
// call at a time, each result fired for the call it answers, Release only
// between calls, nothing but ignorable triggers after the handle ended,
// and every FenceTaken answered once. It runs where the build tag
// collabmonitor is set (make test and the campaign's workers): the
// constant monitoring is false otherwise, and the compiler drops every
// call, so it costs nothing in production. A broken duty ends the process (internal/contract) with the
// handle's recent steps.

// leaseFamily names the triggers' facts and outputs in reports: every
// lease policy speaks the family's vocabulary.
var leaseFamily, _ = policy.LookupFamily("lease")

// monitorSteps is how many recent steps a violation report shows.
const monitorSteps = 12

// calls are the outputs that start a repository call.
const calls = policy.LeaseOutputLoad | policy.LeaseOutputClaim | policy.LeaseOutputRenew | policy.LeaseOutputTombstone

// leaseMonitor is one handle's monitor.
type leaseMonitor struct {
	call     policy.Outputs // the repository call in flight, or 0
	ended    bool           // endHandle has been output
	returned bool           // acquired has been output: the handle is held
	// answered is the answer to the policy's last call, fenceRead the
	// record RunFenced read under the fence (monitor_edge.go).
	answered, fenceRead monitoredCall
	fences              int // fences the handle holds
	// failedRenewals counts the renewals answered RepoFailed since the
	// last one Saved: what a deadline's loss must report (duty 6).
	failedRenewals int
	steps          int // steps so far
	recent         [monitorSteps]monitoredStep
}

// monitoredStep is one step as the monitor saw it.
type monitoredStep struct {
	from    policy.StateID
	trigger policy.TriggerID
	facts   policy.Facts
	result  policy.Result
}

// check records the step from state from on trigger t with facts f, which
// gave r, and returns the duty it broke, or "".
func (mon *leaseMonitor) check(from policy.StateID, t policy.TriggerID, f policy.Facts, r policy.Result) string {
	mon.recent[mon.steps%monitorSteps] = monitoredStep{from, t, f, r}
	mon.steps++
	if broke := mon.before(t); broke != "" {
		return broke
	}
	switch t {
	case policy.LeaseLoaded, policy.LeaseSaved, policy.LeaseConflict, policy.LeaseRepoFailed:
		if mon.call == policy.LeaseOutputRenew {
			mon.failedRenewals++
			if t != policy.LeaseRepoFailed {
				mon.failedRenewals = 0
			}
		}
		mon.call = 0 // answered, whether the policy takes the answer or not
	}
	if r.Verdict != policy.Fired {
		return ""
	}
	return mon.after(t, r.Outputs)
}

// before checks that the manager may fire t now.
func (mon *leaseMonitor) before(t policy.TriggerID) string {
	switch t {
	case policy.LeaseAcquire:
		if mon.steps != 1 {
			return "Acquire fired at a handle that has stepped before"
		}
	case policy.LeaseLoaded:
		if mon.call != policy.LeaseOutputLoad {
			return "Loaded fired with no read in flight"
		}
	case policy.LeaseSaved, policy.LeaseConflict:
		if mon.call&(policy.LeaseOutputClaim|policy.LeaseOutputRenew|policy.LeaseOutputTombstone) == 0 {
			return "a write's result fired with no write in flight"
		}
	case policy.LeaseRepoFailed:
		if mon.call == 0 {
			return "RepoFailed fired with no repository call in flight"
		}
	case policy.LeaseRelease:
		if mon.call != 0 {
			return "Release fired while a repository call is in flight"
		}
	}
	return ""
}

// after checks the outputs of a step that fired, and keeps the call in
// flight and the end of the handle.
func (mon *leaseMonitor) after(t policy.TriggerID, out policy.Outputs) string {
	if t == policy.LeaseFenceTaken && out.Has(policy.LeaseOutputRunFenced) == out.Has(policy.LeaseOutputRefuseFenced) {
		return "FenceTaken answered with both or neither of runFenced and refuseFenced"
	}
	if c := out & calls; c != 0 {
		switch {
		case c&(c-1) != 0:
			return "a step asked for two repository calls at once"
		case mon.call != 0:
			return "a step asked for a repository call while one is in flight"
		case mon.ended:
			return "a step asked for a repository call after the handle ended"
		}
		mon.call = c
	}
	if out.Has(policy.LeaseOutputAcquired) {
		mon.returned = true
	}
	if out.Has(policy.LeaseOutputEndHandle) {
		if mon.call != 0 {
			return "the handle ended with a repository call in flight"
		}
		mon.ended = true
	}
	return ""
}

// monitorLocked checks h's step s, and ends the process with the handle's recent steps if it broke a duty.
func (m *Manager) monitorLocked(h *Lease, s leasestep.Step) {
	t, f, r := s.Trigger, s.Facts, s.Result
	broke := m.checkEdgeLocked(h, t, f, r) // before check notes what r outputs
	if broke == "" && r.Verdict == policy.Fired && r.Outputs.Has(policy.LeaseOutputDeclareLost) {
		broke = h.mon.lossBroke(h, t) // before check counts this step's answer
	}
	if b := h.mon.check(s.From, t, f, r); broke == "" {
		broke = b
	}
	if broke != "" {
		contract.Fail(h.mon.report(m.pol, h.key, broke))
	}
}

// report writes the broken duty and the recent steps of handle key.
func (mon *leaseMonitor) report(pol policy.Policy, key string, broke string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "lease: contract monitor: key %q: %s\nrecent steps, oldest first:\n", key, broke)
	t := pol.Table()
	first := max(mon.steps-monitorSteps, 0)
	for i := first; i < mon.steps; i++ {
		s := mon.recent[i%monitorSteps]
		fmt.Fprintf(&b, "  %d. %s --%s", i+1, t.States[s.from].Name, t.Triggers[s.trigger].Name)
		if s.facts != 0 {
			fmt.Fprintf(&b, " [%s]", leaseFamily.FormatFacts(s.facts))
		}
		fmt.Fprintf(&b, "--> %v", s.result.Verdict)
		if s.result.Verdict == policy.Fired {
			fmt.Fprintf(&b, " %s / %s", t.States[s.result.Next].Name, leaseFamily.FormatOutputs(s.result.Outputs))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
