package lease

import (
	"context"
	"time"

	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/platform"
)

// stopTimersLocked cancels h's renewal and deadline.
func (h *Lease) stopTimersLocked() {
	h.scheduled = false
	if h.deadline != nil {
		h.deadline.Stop()
		h.deadline = nil
	}
}

// armDeadlineLocked makes DeadlinePassed fire in d: TTL after the start
// of the write that just succeeded, which is before any observer may take
// over, as observers count TTL from a later moment: when they first saw
// that write.
func (h *Lease) armDeadlineLocked(d time.Duration) {
	if h.deadline != nil {
		h.deadline.Stop()
	}
	m := h.m
	var armed platform.Timer
	armed = m.clock.AfterFunc(max(d, 0), func() {
		m.mu.Lock()
		defer m.unlockAndReport()
		if h.deadline != armed {
			return // stopped or re-armed since this timer fired
		}
		h.deadline = nil
		m.steppedLocked(h, leasestep.DeadlinePassed(m.pol, h.env(), &h.step))
	})
	h.deadline = armed
}

// passDeadlineLocked fires DeadlinePassed at h, as its deadline's timer
// would, when the deadline has come by now although the timer's goroutine
// has not run yet, and reports whether it did. A renewal must not start
// then: it could succeed, and the lease would live on past the moment it
// promised to declare itself lost.
func (h *Lease) passDeadlineLocked(now time.Duration) bool {
	m := h.m
	if h.deadline == nil || now < h.step.WriteStart+m.lifetime() {
		return false
	}
	h.deadline.Stop()
	h.deadline = nil
	m.steppedLocked(h, leasestep.DeadlinePassed(m.pol, h.env(), &h.step))
	return true
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
