package lanes

import (
	"fmt"
	"strings"

	"github.com/rivus/collab/internal/contract"
	"github.com/rivus/collab/policy"
)

// The contract monitor checks, as the lanes run, the duties of the
// runtime around the lane policy's steps that internal/lanestep (the step
// the lane world checks) cannot see, because they are the drivers' and the
// goroutines':
//
//  1. Activate runs only for the activation its lane holds a slot for,
//     never for two activations of one key at once, and never for more
//     keys at once than there are slots in use (at most MaxConcurrent);
//  2. ActivationEnded fires once per activation, after its Activate and
//     OnExit returned, and only while it is still its lane's activation;
//  3. every Wake that the policy takes is answered with exactly one
//     result;
//  4. a turn timeout interrupts only an activation whose Activate has not
//     returned: OnExit must not hear of a timeout of one that returned;
//  5. an interrupt (Cancel, Close, a timeout) ends the running
//     activation's context at once, so that Activate learns of it.
//
// It runs where the build tag collabmonitor is set (make test and the
// campaign's workers); the constant monitoring is false otherwise, and
// the compiler drops every call. A broken duty ends the process
// (internal/contract) with the lanes' recent steps.

// monitorSteps is how many recent steps a violation report shows.
const monitorSteps = 16

// laneMonitor is the monitor's state, under Lanes.mu.
type laneMonitor struct {
	active map[any]int // activations inside Activate, by key
	total  int         // their sum
	steps  int
	// recent keeps the last steps for a violation's report, with their
	// keys: a monitored build keeps up to monitorSteps keys reachable
	// after their lanes went idle, until later steps push them out.
	recent [monitorSteps]laneStep
}

// laneStep is one step the policy took, as the monitor saw it.
type laneStep struct {
	key     any
	trigger policy.TriggerID
	result  policy.Result
}

// wakeAnswers are the outputs that answer a Wake.
const wakeAnswers = policy.LaneOutputStarted | policy.LaneOutputQueued | policy.LaneOutputCoalesced | policy.LaneOutputQueueFull

// noteLocked keeps the step of key on trigger t, which gave r.
func (mon *laneMonitor) noteLocked(key any, t policy.TriggerID, r policy.Result) {
	mon.recent[mon.steps%monitorSteps] = laneStep{key, t, r}
	mon.steps++
}

// enterLocked checks that activation run may enter Activate for ln now
// (duty 1).
func (l *Lanes[K]) enterLocked(ln *lane[K], run *activationContext) {
	mon := &l.mon
	switch {
	case !ln.run.is(run):
		l.broke(ln.key, "Activate runs for an activation that holds no slot of its lane")
	case mon.active[ln.key] > 0:
		l.broke(ln.key, "Activate runs for a key whose other activation has not returned")
	case mon.total+1 > l.running || l.running > l.cfg.MaxConcurrent:
		l.broke(ln.key, fmt.Sprintf("%d activations run with %d slots in use, of %d", mon.total+1, l.running, l.cfg.MaxConcurrent))
	}
	if mon.active == nil {
		mon.active = map[any]int{}
	}
	mon.active[ln.key]++
	mon.total++
}

// leaveLocked notes that run's Activate returned.
func (l *Lanes[K]) leaveLocked(ln *lane[K]) {
	ln.left = true
	l.mon.active[ln.key]--
	if l.mon.active[ln.key] == 0 {
		delete(l.mon.active, ln.key)
	}
	l.mon.total--
}

// timingOutLocked checks that ln's activation may time out now (duty 4).
// A timeout may come before the activation's goroutine has entered
// Activate (a turn timeout shorter than the wait for a CPU): that is no
// breach; only one after Activate returned is.
func (l *Lanes[K]) timingOutLocked(ln *lane[K]) {
	if ln.left {
		l.broke(ln.key, "a turn timeout interrupts an activation whose Activate has returned")
	}
}

// interruptedLocked checks, after a step of ln that gave res, that an
// interrupt it carried out ended ln's running activation's context (duty
// 5).
func (l *Lanes[K]) interruptedLocked(ln *lane[K], res policy.Result) {
	if res.Verdict == policy.Fired && res.Outputs.Has(policy.LaneOutputInterrupt) && ln.run.held() && ln.run.ctx.cancelCause() == nil {
		l.broke(ln.key, "an interrupt leaves the running activation's context live")
	}
}

// endingLocked checks that activation run may end now (duty 2).
func (l *Lanes[K]) endingLocked(ln *lane[K], run *activationContext) {
	if !ln.run.is(run) {
		l.broke(ln.key, "ActivationEnded fires for an activation that is no longer its lane's")
	}
}

// broke ends the process with the broken duty and the recent steps.
func (l *Lanes[K]) broke(key K, duty string) {
	var b strings.Builder
	fmt.Fprintf(&b, "lanes: contract monitor: key %v: %s\nrecent steps, oldest first:\n", key, duty)
	t, mon := l.pol.Table(), &l.mon
	for i := max(mon.steps-monitorSteps, 0); i < mon.steps; i++ {
		s := mon.recent[i%monitorSteps]
		fmt.Fprintf(&b, "  %d. key %v: --%s--> %s / %s\n", i+1, s.key, t.Triggers[s.trigger].Name,
			t.States[s.result.Next].Name, laneFamily.FormatOutputs(s.result.Outputs))
	}
	contract.Fail(b.String())
}

// laneFamily names outputs in reports.
var laneFamily, _ = policy.LookupFamily("lane")
