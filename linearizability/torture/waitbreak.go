package torture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	pidExt     = ".pid"   // a worker's pid, in the events directory
	brokenPID  = "pid %d" // Output.Value of a Break OK: the pid of the holder it ended
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
		return outUnknown
	})
	return l, err
}

// breakOp breaks key's lease without force (lease.Break), as an
// operator would a stuck holder. It is recorded as a Break: OK with the
// generation broken and the holder's pid (which the check holds against
// the kills: without force, only a dead holder may be broken, and every
// holder of a campaign shares this process table); Refused when Break
// wrote nothing (no lease, a holder that may still run, or one that
// renewed or was taken over meanwhile); Unknown otherwise.
func (w *worker) breakOp(key string) error {
	return w.record(key, lz.Break, lz.Input{}, func(ctx context.Context) lz.Output {
		snap, err := lease.Break(ctx, w.repo, w.plat, key, false)
		switch {
		case err == nil:
			w.note(noteBroke)
			return lz.Output{Status: lz.OK, Gen: uint64(snap.Generation), Value: fmt.Sprintf(brokenPID, snap.Holder.PID)}
		case errors.Is(err, lease.ErrNotHeld), errors.Is(err, lease.ErrHeld), errors.Is(err, store.ErrRevisionConflict):
			return outRefused
		}
		return outUnknown
	})
}

// writePID writes the worker's pid to its file in the events directory,
// so that the check can tell which worker a broken holder was.
func (w *worker) writePID() error {
	return os.WriteFile(procFile(w.a.Dir, eventsDir, w.a.Process, pidExt), fmt.Appendf(nil, "%d\n", os.Getpid()), 0o600)
}

// liveBreaks returns, for each break without force that ended a holder
// no kill had been sent to when the break returned, why it is wrong:
// every worker of a campaign shares this process table, so such a holder
// was alive (running, or paused: both may still write), and Break
// without force must refuse it. pids maps each worker's pid to its
// process number (readPIDs).
func liveBreaks(h lz.History, pids map[int]int) []string {
	killed := map[int]int64{} // process → the call of its crash: the kill came after
	for _, e := range h.Events {
		if e.Kind == lz.Crash && e.Key == "" {
			if t, ok := killed[e.Process]; !ok || e.Call < t {
				killed[e.Process] = e.Call
			}
		}
	}
	var out []string
	for _, e := range h.Events {
		if e.Kind != lz.Break || e.Open || e.Output.Status != lz.OK {
			continue
		}
		var pid int
		if _, err := fmt.Sscanf(e.Output.Value, brokenPID, &pid); err != nil {
			out = append(out, fmt.Sprintf("p%d's break of %q (gen %d) names no holder pid: %q", e.Process, e.Key, e.Output.Gen, e.Output.Value))
			continue
		}
		p, ok := pids[pid]
		if !ok {
			out = append(out, fmt.Sprintf("p%d's break of %q (gen %d) ended pid %d, no worker of this campaign", e.Process, e.Key, e.Output.Gen, pid))
			continue
		}
		if t, ok := killed[p]; !ok || t > e.Return {
			out = append(out, fmt.Sprintf("p%d's break of %q without force ended gen %d of p%d (pid %d), which was alive: no kill had been sent to it when the break returned", e.Process, e.Key, e.Output.Gen, p, pid))
		}
	}
	return out
}

// readPIDs reads the pid files of the run's workers: pid → process.
func readPIDs(dir string) (map[int]int, error) {
	paths, err := filepath.Glob(filepath.Join(dir, eventsDir, "p*"+pidExt))
	if err != nil {
		return nil, err
	}
	pids := make(map[int]int, len(paths))
	for _, path := range paths {
		var p, pid int
		if _, err := fmt.Sscanf(filepath.Base(path), "p%d"+pidExt, &p); err != nil {
			return nil, fmt.Errorf("torture: %s: not a worker's pid file: %w", path, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if _, err := fmt.Sscanf(string(b), "%d\n", &pid); err != nil || pid <= 0 {
			return nil, fmt.Errorf("torture: %s: %q is not a pid", path, b)
		}
		pids[pid] = p
	}
	return pids, nil
}
