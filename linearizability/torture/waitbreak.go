package torture

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	lz "github.com/rivus/collab/linearizability"
)

// Words of the events file for waits and breaks.
const (
	noteWait   = "wait"   // an AcquireWait began
	noteWaited = "waited" // an AcquireWait acquired: a handover
	noteBroke  = "broke"  // a Break ended a holder
)

// waitOp waits for key's lease (Manager.AcquireWait) for between half a
// TTL and three TTLs: long enough to be handed the lease by most
// holders, short enough that some waits end refused. It is recorded as
// an Acquire: OK with the generation it got, Refused when the wait ended
// between attempts whose last was refused (a *lease.WaitError matches
// lease.ErrHeld), Unknown otherwise (an attempt cut short).
func (w *worker) waitOp(key string) (*lease.Lease, error) {
	w.note(noteWait)
	patience := w.a.TTL/2 + time.Duration(w.rng.Int64N(int64(w.a.TTL)*5/2))
	var l *lease.Lease
	err := w.record(key, lz.Acquire, lz.Input{}, func(ctx context.Context) lz.Output {
		ctx, cancel := context.WithTimeout(ctx, patience)
		defer cancel()
		var err error
		l, err = w.mgr.AcquireWait(ctx, key)
		switch {
		case err == nil:
			w.note(noteWaited)
			return lz.Output{Status: lz.OK, Gen: uint64(l.Token())}
		case errors.Is(err, lease.ErrHeld):
			return outRefused
		}
		return unknown(ctx, err)
	})
	return l, err
}

// breakOp breaks key's lease without force (lease.Break), as an
// operator would a stuck holder. It is recorded as a Break: OK with the
// generation broken and the holder's pid and pid namespace, and the
// worker's (which the check holds against the kills: see judged.go);
// Refused when Break
// wrote nothing (no lease, a holder that may still run, or one that
// renewed or was taken over meanwhile); Unknown otherwise.
func (w *worker) breakOp(key string) error {
	return w.record(key, lz.Break, lz.Input{}, func(ctx context.Context) lz.Output {
		snap, err := lease.Break(ctx, w.repo, w.plat, key, false)
		switch {
		case err == nil:
			w.note(noteBroke)
			return lz.Output{Status: lz.OK, Gen: uint64(snap.Generation), Value: fmt.Sprintf(brokenHolder, snap.Holder.PID, snap.Holder.PIDNamespace, snap.Holder.StartTime, w.self.PIDNamespace)}
		case errors.Is(err, lease.ErrNotHeld), errors.Is(err, lease.ErrHeld), errors.Is(err, store.ErrRevisionConflict):
			return outRefused
		}
		return unknown(ctx, err)
	})
}
