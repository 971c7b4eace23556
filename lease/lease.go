package lease

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// Token is a fencing token: the generation of a lease. It grows on every
// acquisition of a key and never goes back, so a resource that keeps the
// highest token it has seen can refuse an old holder's writes. It is
// store.Token, named here for the users of leases.
type Token = store.Token

// Lease is a held lease: the holder's handle on one key.
//
// Its fields below self are guarded by Manager.mu; token is written once,
// before Acquire returns the handle.
type Lease struct {
	m     *Manager
	key   string
	self  platform.Identity
	token Token
	value string // published with every write of the holder, not a tombstone's

	// step is the handle's bookkeeping, which only the lease step
	// (internal/leasestep) changes; step.Call is the repository call in
	// flight, made by the goroutine that fired the step that asked for it.
	step leasestep.Handle[time.Duration]
	// loaded is the record the acquisition last loaded (TakenOver, the
	// HeldError, the holder's own TTL in the silence rule).
	loaded   store.Record
	reply    reply // how the step answered the pending Acquire or Close
	fenceRun bool  // how the last FenceTaken was answered
	// The deadline and the renewal: when each falls due, and its place
	// in the manager's heap of its kind, plus one (0: not armed).
	deadlineAt, renewAt time.Duration
	heapAt              [2]int
	fenced              map[*context.CancelCauseFunc]struct{}
	lost                chan struct{} // closed when the lease ends
	err                 error         // a *LossError (ErrLost) or ErrReleased once ended

	// failedRenewals counts the renewals that failed since the last
	// that succeeded, lastRenewErr the last failure; loss is why the
	// step being fired would declare the lease lost, set by the driver
	// that fires it and cleared once it is stepped.
	failedRenewals int
	lastRenewErr   error
	loss           *LossError

	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool // Close has returned: for lease/leader's monitor

	// mon is the contract monitor's notes, under the manager's lock; nil
	// unless the build monitors, so that a production handle carries none.
	mon *leaseMonitor
}

// Key returns the leased key.
func (h *Lease) Key() string { return h.key }

// Token returns the lease's fencing token: its generation.
func (h *Lease) Token() Token { return h.token }

// Value returns the value the lease publishes (WithValue), "" for none.
func (h *Lease) Value() string { return h.value }

// Lost returns a channel that is closed when the lease ends: lost (Err
// returns ErrLost) or released by Close (Err returns ErrReleased). Race
// other work against it, as against a context's Done.
func (h *Lease) Lost() <-chan struct{} { return h.lost }

// Err returns nil while the lease is held, then a *LossError, which
// matches ErrLost and says why the lease was lost, or ErrReleased (an
// error that matches ErrReleased and ErrClosed when the Manager's Close
// released it).
func (h *Lease) Err() error {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	return h.err
}

// Deadline returns the moment, on the manager's clock, at which the
// holder declares the lease lost unless a renewal moves it on first:
// before it no successor can take the lease over, since observers wait
// out the TTL from a later moment. Work that cannot be fenced (a write to
// a resource that keeps no token) checks it before each write and stops
// with room to spare: time.Until(l.Deadline()) > the write's longest
// duration. The check says nothing of a write made after the process was
// paused past the deadline: a paused holder learns of its loss only when
// it resumes, which is why fencing exists. The zero time once the lease
// has ended; the time is monotonic, unaffected by wall-clock steps.
func (h *Lease) Deadline() time.Time {
	m := h.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if h.err != nil || h.heapAt[deadlineTimer] == 0 {
		return time.Time{}
	}
	return m.clock.Now().Add(h.deadlineAt - m.now())
}

// snapshot is the record this holder writes: its value while it holds
// the lease, none in its tombstone.
func (h *Lease) snapshot(gen Token, released bool) store.Snapshot {
	s := store.Snapshot{Generation: gen, Holder: h.self, Released: released, RenewedAt: h.m.clock.Now(), TTL: h.m.cfg.TTL}
	if !released {
		s.Value = h.value
	}
	return s
}
