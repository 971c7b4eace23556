package lease

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/rivus/collab/lease/internal/check"
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

// Acquire takes the lease on key, or returns a *HeldError while a live
// holder renews it, and ErrClosed once the manager is closing. A holder on this process table whose process is gone
// (or whose pid now belongs to another process) is taken over at once; a
// live one that stopped renewing, and one in another process table, after
// the TTL on this manager's monotonic clock from when it first saw the
// holder's current record.
func (m *Manager) Acquire(ctx context.Context, key string) (*Lease, error) {
	if err := check.Call(ctx, key); err != nil {
		return nil, err
	}
	self, err := m.p.Process.Self()
	if err != nil {
		return nil, err
	}
	h := &Lease{m: m, key: key, self: self, lost: make(chan struct{}), fenced: map[*context.CancelCauseFunc]struct{}{}}
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	m.acquiring.Add(1)
	defer m.acquiring.Done()
	out := m.fireLocked(h, trAcquire, 0)
	m.mu.Unlock()
	a := acquisition{m: m, h: h, ctx: ctx}
	return a.drive(out)
}

// acquisition carries out the repository calls of one Acquire.
type acquisition struct {
	m   *Manager
	h   *Lease
	ctx context.Context
	rec store.Record // the last record loaded
	ok  bool         // whether a record existed
	err error        // the last repository error
}

func (a *acquisition) drive(out policy.Outputs) (*Lease, error) {
	for {
		switch {
		case out.Has(outAcquired):
			return a.h, nil
		case out.Has(outHeldError):
			holder := a.rec.Snapshot.Holder
			return nil, &HeldError{Key: a.h.key, Holder: &holder}
		case out.Has(outRepoError):
			if a.ctx.Err() != nil {
				return nil, context.Cause(a.ctx)
			}
			return nil, a.err
		case out.Has(outLoad):
			out = a.load()
		case out.Has(outClaim):
			out = a.claim()
		default:
			panic("lease: policy " + a.m.pol.Name() + " left Acquire with nothing to do")
		}
	}
}

func (a *acquisition) load() policy.Outputs {
	rec, ok, err := a.m.cfg.Repository.Load(a.ctx, a.h.key)
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	if err != nil {
		a.err = err
		return a.m.fireLocked(a.h, trRepoFailed, 0)
	}
	a.rec, a.ok = rec, ok
	return a.m.fireLocked(a.h, trLoaded, a.m.observeLocked(a.h.key, rec, ok))
}

// observeLocked computes the facts of a record loaded to acquire it: free,
// its holder dead on proof, or silent for the TTL since this manager first
// saw its revision (a sighting it records, and forgets once the key is
// free).
func (m *Manager) observeLocked(key string, rec store.Record, ok bool) policy.Facts {
	if !ok || rec.Snapshot.Released {
		delete(m.seen, key)
		return factRecordFree
	}
	var f policy.Facts
	if m.p.Process.Judge(rec.Snapshot.Holder).Liveness == platform.Dead {
		f |= factHolderDead
	}
	if m.ttlElapsedLocked(key, rec) {
		f |= factTTLElapsed
	}
	return f
}

// ours reports whether a record still holds h's generation.
func (h *Lease) ours(rec store.Record, ok bool) policy.Facts {
	if ok && !rec.Snapshot.Released && rec.Snapshot.Generation == h.token {
		return factRecordOurs
	}
	return 0
}

// claim writes this holder with the next generation over the loaded
// revision.
func (a *acquisition) claim() policy.Outputs {
	next := Token(1)
	var expected store.Revision
	if a.ok {
		if a.rec.Snapshot.Generation == math.MaxUint64 {
			a.err = &store.RepositoryError{Op: "claim", Key: a.h.key, Err: errors.New("the generation cannot grow past its largest value")}
			a.m.mu.Lock()
			defer a.m.mu.Unlock()
			return a.m.fireLocked(a.h, trRepoFailed, 0)
		}
		next, expected = a.rec.Snapshot.Generation+1, a.rec.Revision
	}
	snap := a.h.snapshot(next, false)
	start := a.m.now()
	rev, err := a.m.cfg.Repository.Save(a.ctx, a.h.key, snap, expected)
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	switch {
	case err == nil:
		a.h.token, a.h.rev, a.h.writeStart = next, rev, start
		delete(a.m.seen, a.h.key)
		out := a.m.fireLocked(a.h, trSaved, 0)
		if out.Has(outAcquired) {
			a.m.live[a.h] = struct{}{}
			a.m.emitLocked(Event{Kind: Acquired, Key: a.h.key, Token: next})
			if a.ok && !a.rec.Snapshot.Released {
				prev := a.rec.Snapshot.Holder
				a.m.emitLocked(Event{Kind: TakenOver, Key: a.h.key, Token: next, Previous: &prev})
			}
		}
		return out
	case errors.Is(err, store.ErrRevisionConflict):
		return a.m.fireLocked(a.h, trConflict, 0)
	}
	a.err = err
	return a.m.fireLocked(a.h, trRepoFailed, 0)
}

// snapshot is the record this holder writes.
func (h *Lease) snapshot(gen Token, released bool) store.Snapshot {
	return store.Snapshot{Generation: gen, Holder: h.self, Released: released, RenewedAt: h.m.clock.Now(), TTL: h.m.cfg.TTL}
}
