package worldmodel

import (
	"github.com/rivus/collab/internal/turnstep"
	"github.com/rivus/collab/policy"
)

// turnBook is a turn world as internal/turnstep reads and changes it: the
// runtime's turn step runs over the world's compact queues, and the world
// records as panics what would make the runtime panic or what its bounds
// cannot hold.
type turnBook struct {
	m *turnModel
	w *TurnWorld
}

var _ turnstep.Runtime[uint8] = turnBook{}

func (b turnBook) State(i uint8) policy.StateID       { return b.w.tasks[i].state }
func (b turnBook) SetState(i uint8, s policy.StateID) { b.w.tasks[i].state = s }
func (b turnBook) Waits(i uint8) bool                 { return b.w.tasks[i].flags&turnWait != 0 }
func (b turnBook) Owns(i uint8) bool                  { return b.queue(i).owner == turnRef(i+1) }
func (b turnBook) TakeTurn(i uint8)                   { b.queue(i).owner = turnRef(i + 1) }
func (b turnBook) FreeTurn(i uint8)                   { b.queue(i).owner = 0 }
func (b turnBook) LeaveQueue(i uint8)                 { b.queue(i).remove(i) }
func (b turnBook) ForgetIfIdle(i uint8)               { b.w.forgetIfIdle(b.w.tasks[i].queue) }

func (b turnBook) queue(i uint8) *turnQueue { return b.w.queue(b.w.tasks[i].queue) }

// Enqueue gives the task a fresh signal, as the runtime does, unless the
// model's queue is full.
func (b turnBook) Enqueue(i uint8) bool {
	q, t := b.queue(i), &b.w.tasks[i]
	if int(q.n) == len(q.waiting) {
		b.w.setPanic(turnPanicCap, i, policy.TurnRequest, t.state)
		return false
	}
	q.waiting[q.n] = i
	q.n++
	t.flags &^= turnTurned
	t.handed = 0
	return true
}

func (b turnBook) Waiters(i uint8) int { return int(b.queue(i).n) }

// TakeWaiter takes out waiter j, unless the turn has been passed more
// often in this move than a policy that ends can pass it.
func (b turnBook) TakeWaiter(i uint8, j int) (uint8, bool) {
	q := b.queue(i)
	next := q.waiting[j]
	if b.m.pops++; b.m.pops > turnMaxPassDepth {
		b.w.setPanic(turnPanicDeep, next, policy.TurnTurn, b.w.tasks[next].state)
		return 0, false
	}
	copy(q.waiting[j:q.n-1], q.waiting[j+1:q.n])
	q.n--
	q.waiting[q.n] = 0
	return next, true
}

// Handed closes the task's turn signal, which the runtime cannot do twice.
func (b turnBook) Handed(i uint8, out policy.Outputs) bool {
	t := &b.w.tasks[i]
	t.handed = uint16(out & turnOutMask())
	if t.flags&turnTurned != 0 {
		b.w.setPanic(turnPanicTwice, i, policy.TurnTurn, t.state)
		return false
	}
	t.flags |= turnTurned
	return true
}

func (b turnBook) Fault(i uint8, trigger policy.TriggerID) {
	b.w.setPanic(turnPanicRejected, i, trigger, b.w.tasks[i].state)
}
