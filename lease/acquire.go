package lease

import (
	"context"
	"errors"
	"math"

	"github.com/rivus/collab/lease/internal/check"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/policy"
)

// Acquire takes the lease on key, or returns a *HeldError while a live
// holder renews it, and ErrClosed once the manager is closing. A holder
// on this process table whose process is gone (or whose pid now belongs
// to another process) is taken over at once; a live one that stopped
// renewing, and one in another process table, after the TTL on this
// manager's monotonic clock from when it first saw the holder's current
// record.
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
	m    *Manager
	h    *Lease
	ctx  context.Context
	rec  store.Record // the last record loaded
	ok   bool         // whether a record existed
	dead bool         // the loaded record's holder is dead on proof
	err  error        // the last repository error
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
	rec, ok, err := a.m.loadFor(a.ctx, a.h, &a.h.mon.answered)
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	if err != nil {
		a.err = err
		return a.m.fireLocked(a.h, trRepoFailed, 0)
	}
	facts := a.m.observeLocked(a.h.key, rec, ok)
	a.rec, a.ok, a.dead = rec, ok, facts&factHolderDead != 0
	return a.m.fireLocked(a.h, trLoaded, facts)
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
	rev, err := a.m.saveFor(a.ctx, a.h, snap, expected)
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
				a.m.emitLocked(Event{Kind: TakenOver, Key: a.h.key, Token: next, Previous: &prev, PreviousDead: a.dead})
			}
		}
		return out
	case errors.Is(err, store.ErrRevisionConflict):
		return a.m.fireLocked(a.h, trConflict, 0)
	}
	a.err = err
	return a.m.fireLocked(a.h, trRepoFailed, 0)
}
