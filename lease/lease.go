package lease

import (
	"context"
	"sync"
	"time"

	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/policy"
)

// Token is a fencing token: the generation of a lease. It grows on every
// acquisition of a key and never goes back, so a resource that keeps the
// highest token it has seen can refuse an old holder's writes. It is
// store.Token, named here for the users of leases.
type Token = store.Token

// Lease is a held lease: the holder's handle on one key.
//
// Its fields below mu are guarded by Manager.mu; state changes only
// through the manager's policy.
type Lease struct {
	m     *Manager
	key   string
	self  platform.Identity
	token Token

	state      policy.StateID
	rev        store.Revision // the revision of this holder's last write
	writeStart time.Duration  // when the last successful write started
	renewAt    time.Duration  // when the next renewal is due, if scheduled
	scheduled  bool
	deadline   platform.Timer // fires DeadlinePassed; nil when not armed
	inflight   bool           // a repository call of the handle is under way
	fenced     map[*context.CancelCauseFunc]struct{}
	lost       chan struct{} // closed when the lease ends
	err        error         // ErrLost or ErrReleased once ended

	closeOnce sync.Once
	closeErr  error

	mon leaseMonitor // the contract monitor's notes, under the manager's lock
}

// Key returns the leased key.
func (h *Lease) Key() string { return h.key }

// Token returns the lease's fencing token: its generation.
func (h *Lease) Token() Token { return h.token }

// Lost returns a channel that is closed when the lease ends: lost (Err
// returns ErrLost) or released by Close (Err returns ErrReleased). Race
// other work against it, as against a context's Done.
func (h *Lease) Lost() <-chan struct{} { return h.lost }

// Err returns nil while the lease is held, then ErrLost or ErrReleased.
func (h *Lease) Err() error {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	return h.err
}

// ours reports whether a record still holds h's generation.
func (h *Lease) ours(rec store.Record, ok bool) policy.Facts {
	if ok && !rec.Snapshot.Released && rec.Snapshot.Generation == h.token {
		return factRecordOurs
	}
	return 0
}

// snapshot is the record this holder writes.
func (h *Lease) snapshot(gen Token, released bool) store.Snapshot {
	return store.Snapshot{Generation: gen, Holder: h.self, Released: released, RenewedAt: h.m.clock.Now(), TTL: h.m.cfg.TTL}
}
