package lease

import (
	"container/heap"
	"context"
	"time"

	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/platform"
)

// The manager's timers are one loop (run), as etcd's lessor runs: two
// heaps, of the handles' deadlines and of their renewals, ordered by when
// each falls due on the manager's monotonic clock. The loop wakes at the
// earliest entry, fires every deadline that has come first, then starts
// the renewals due as one batch, which the saver writes; it never does
// I/O and never runs user code, so that no slow store, log handler or
// OnEvent delays a declaration of loss.

// The two kinds of timer a handle has, each in a heap of its own.
const (
	deadlineTimer = iota
	renewalTimer
)

// timerHeap is a min-heap of the handles with a timer of one kind armed,
// by when it falls due; each handle knows its place (Lease.heapAt), so
// that re-arming or stopping a timer moves or removes its entry at once
// and the heap holds no handle that has no timer.
type timerHeap struct {
	kind int
	hs   []*Lease
}

func (q *timerHeap) at(i int) time.Duration {
	if q.kind == deadlineTimer {
		return q.hs[i].deadlineAt
	}
	return q.hs[i].renewAt
}

func (q *timerHeap) Len() int           { return len(q.hs) }
func (q *timerHeap) Less(i, j int) bool { return q.at(i) < q.at(j) }
func (q *timerHeap) Swap(i, j int) {
	q.hs[i], q.hs[j] = q.hs[j], q.hs[i]
	q.hs[i].heapAt[q.kind], q.hs[j].heapAt[q.kind] = i+1, j+1
}
func (q *timerHeap) Push(x any) {
	h := x.(*Lease)
	q.hs = append(q.hs, h)
	h.heapAt[q.kind] = len(q.hs)
}
func (q *timerHeap) Pop() any {
	h := q.hs[len(q.hs)-1]
	q.hs[len(q.hs)-1] = nil
	q.hs = q.hs[:len(q.hs)-1]
	h.heapAt[q.kind] = 0
	return h
}

// next returns when the earliest timer of q falls due, if one is armed.
func (q *timerHeap) next() (time.Duration, bool) {
	if len(q.hs) == 0 {
		return 0, false
	}
	return q.at(0), true
}

// setLocked arms h's timer of q's kind, or moves it, and wakes the loop
// if it may now come first.
func (m *Manager) setLocked(q *timerHeap, h *Lease) {
	if i := h.heapAt[q.kind]; i != 0 {
		heap.Fix(q, i-1)
	} else {
		heap.Push(q, h)
	}
	if q.hs[0] == h {
		m.kickLoop()
	}
}

// unsetLocked stops h's timer of q's kind.
func unsetLocked(q *timerHeap, h *Lease) {
	if i := h.heapAt[q.kind]; i != 0 {
		heap.Remove(q, i-1)
	}
}

// stopTimersLocked cancels h's renewal and deadline.
func (h *Lease) stopTimersLocked() {
	unsetLocked(&h.m.deadlines, h)
	unsetLocked(&h.m.renewals, h)
}

// armDeadlineLocked makes DeadlinePassed fire in d: TTL after the start
// of the write that just succeeded, which is before any observer may take
// over, as observers count TTL from a later moment: when they first saw
// that write.
func (h *Lease) armDeadlineLocked(d time.Duration) {
	m := h.m
	h.deadlineAt = m.now() + max(d, 0)
	m.setLocked(&m.deadlines, h)
}

// scheduleLocked plans h's next renewal d from now.
func (m *Manager) scheduleLocked(h *Lease, d time.Duration) {
	h.renewAt = m.now() + d
	m.setLocked(&m.renewals, h)
}

// kickLoop makes the loop plan again. The caller holds m.mu.
func (m *Manager) kickLoop() {
	m.kicks++
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// planSlack is how late the loop's timer may be for the time it took to
// make it from its reading of the clock.
const planSlack = time.Millisecond

// run is the timer loop; Close stops it.
func (m *Manager) run() {
	defer close(m.loopDone)
	for {
		m.mu.Lock()
		m.planning, m.kicksPlanned = true, m.kicks
		select {
		case <-m.kick: // a kick this plan already heeds
		default:
		}
		now := m.now()
		wake, ok := m.tickLocked(now)
		m.unlockAndHandOff()
		// A timer made from the reading now, so that a test's clock
		// counts it from there (see lease's tests, readingClock).
		var timer platform.Timer
		var fired <-chan time.Time
		if ok {
			timer = m.clock.NewTimer(max(wake-now, 0))
			fired = timer.C()
		}
		m.mu.Lock()
		if ok && m.now()-now > planSlack {
			// The clock moved on while the timer was made (a test's
			// clock jumped, or this goroutine was held up): the timer
			// would be late by as much, so plan again.
			m.mu.Unlock()
			timer.Stop()
			continue
		}
		m.planning, m.wakeAt, m.wakeArmed = false, wake, ok
		m.changedLocked()
		m.mu.Unlock()
		select {
		case <-fired:
		case <-m.kick:
		case <-m.stop:
		}
		if timer != nil {
			timer.Stop()
		}
		select {
		case <-m.stop:
			return
		default:
		}
	}
}

// tickLocked fires the deadlines that have come by now, then starts the
// renewals due, and returns when the next timer falls due, if one does.
func (m *Manager) tickLocked(now time.Duration) (time.Duration, bool) {
	for {
		at, ok := m.deadlines.next()
		if !ok || at > now {
			break
		}
		h := m.deadlines.hs[0]
		heap.Pop(&m.deadlines)
		h.loss = deadlineLoss(h)
		m.steppedLocked(h, leasestep.DeadlinePassed(m.pol, h.env(), &h.step))
	}
	if at, ok := m.renewals.next(); ok && at <= now && !m.saving {
		if batch, until := m.collectDueLocked(now); len(batch) > 0 {
			m.saving = true
			m.batches <- saveJob{batch, until}
		}
	}
	next, found := m.wakeSleepersLocked(now)
	if at, ok := m.deadlines.next(); ok && (!found || at < next) {
		next, found = at, true
	}
	if at, ok := m.renewals.next(); ok && !m.saving && (!found || at < next) {
		next, found = at, true
	}
	return next, found
}

// changedLocked wakes whoever waits for the manager to settle; with
// nobody waiting it costs nothing.
func (m *Manager) changedLocked() {
	if m.changed != nil {
		close(m.changed)
		m.changed = nil
	}
}

// endLocked ends h with err: Lost() closes, timers stop, and fenced work
// in flight is cancelled with err as its cause.
func (h *Lease) endLocked(err error) {
	h.stopTimersLocked()
	if h.err != nil {
		return
	}
	h.err = err
	close(h.lost)
	for cancel := range h.fenced {
		(*cancel)(err)
	}
}

// addFencedLocked registers the cancel of a fenced run, or cancels it at
// once when the lease has already ended.
func (h *Lease) addFencedLocked(cancel *context.CancelCauseFunc) {
	if h.err != nil {
		(*cancel)(h.err)
		return
	}
	h.fenced[cancel] = struct{}{}
}
