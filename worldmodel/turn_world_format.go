package worldmodel

import (
	"fmt"

	"github.com/rivus/collab/policy"
)

func (m *turnModel) stateName(s policy.StateID) string {
	if int(s) < len(m.tab.States) {
		return m.tab.States[s].Name
	}
	return fmt.Sprintf("State(%d)", s)
}

func (m *turnModel) triggerName(t policy.TriggerID) string {
	if int(t) < len(m.tab.Triggers) {
		return m.tab.Triggers[t].Name
	}
	return fmt.Sprintf("Trigger(%d)", t)
}

func (m *turnModel) describePanic(w TurnWorld) string {
	p := w.panic
	name, state := m.names[p.task], m.stateName(p.state)
	switch p.kind {
	case turnPanicRejected:
		return fmt.Sprintf("plock panics: the policy rejects %s in state %s (%s)", m.triggerName(p.trigger), state, name)
	case turnPanicNoWork:
		return fmt.Sprintf("plock panics: %s's call has nothing to do in state %s", name, state)
	case turnPanicTwice:
		return fmt.Sprintf("plock panics: the turn is handed to %s a second time (close of closed channel)", name)
	case turnPanicNilHeld:
		return fmt.Sprintf("plock panics: %s releases a Lock whose attempt took nothing", name)
	case turnPanicDeep:
		return fmt.Sprintf("plock recurses without end handing the turn over (at %s, state %s)", name, state)
	case turnPanicCap:
		return fmt.Sprintf("the model's queue capacity is exceeded: %s queued over and over", name)
	}
	return ""
}

// format renders w for traces: the other process, the registry, the
// queues, then each task.
func (m *turnModel) format(w TurnWorld) string {
	var b []byte
	if w.other {
		b = append(b, "other process holds the lock"...)
	} else {
		b = append(b, "lock free of other processes"...)
	}
	b = fmt.Appendf(b, " (%d takes left); registry: %s", w.takes, turnQueueName(w.reg))
	refs, n := w.liveQueues()
	for _, r := range refs[:n] {
		q := w.queue(r)
		b = fmt.Appendf(b, "; %s owner %s waiting [", turnQueueName(r), m.taskName(q.owner))
		for k, x := range q.waiting[:q.n] {
			if k > 0 {
				b = append(b, ' ')
			}
			b = append(b, m.names[x]...)
		}
		b = append(b, ']')
	}
	for i := range w.n {
		b = append(b, "\n       "...)
		b = m.appendTask(b, &w.tasks[i], i)
	}
	if w.panic.kind != turnNoPanic {
		b = append(b, "\n       "...)
		b = append(b, m.describePanic(w)...)
	}
	return string(b)
}

func (m *turnModel) appendTask(b []byte, t *turnTask, i uint8) []byte {
	b = fmt.Appendf(b, "%s %s (state %s)", m.names[i], turnPhaseNames[t.phase], m.stateName(t.state))
	flags := [...]struct {
		f    turnFlags
		name string
	}{
		{turnWait, "wait"}, {turnCancellable, "cancellable"}, {turnCtxDone, "ctx done"},
		{turnTurned, "turned"}, {turnHadError, "attempt failed"}, {turnHeldLock, "HOLDS THE LOCK"},
	}
	for _, f := range flags {
		if t.flags&f.f != 0 {
			b = append(b, ", "...)
			b = append(b, f.name...)
		}
	}
	if t.queue != 0 {
		b = fmt.Appendf(b, ", in %s", turnQueueName(t.queue))
	}
	if t.arrival != 0 {
		b = fmt.Appendf(b, ", arrival %d", t.arrival)
	}
	if t.handed != 0 {
		b = fmt.Appendf(b, ", handed %s", policy.FormatBits(uint64(t.handed), m.outputNames(), "Outputs"))
	}
	return b
}

func (m *turnModel) outputNames() []string {
	names := make([]string, len(m.tab.Outputs))
	for i, o := range m.tab.Outputs {
		names[i] = o.Name
	}
	return names
}

func (m *turnModel) taskName(r turnRef) string {
	if r == 0 {
		return "none"
	}
	return m.names[r-1]
}

func turnQueueName(r turnRef) string {
	if r == 0 {
		return "no queue"
	}
	return fmt.Sprintf("q%d", r)
}
