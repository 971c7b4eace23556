package torture

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rivus/collab/lease"
	lz "github.com/rivus/collab/linearizability"
	"github.com/rivus/collab/plock"
)

// Words of the events file.
const (
	noteTakeover = "takeover"
	noteRefused  = "refused" // a fenced write refused: a stale holder stopped
	noteLost     = "lost"    // a holder declared its lease lost
)

// Outputs the operations record; one of unknown outcome says why
// (unknown).
var (
	outOK      = lz.Output{Status: lz.OK}
	outRefused = lz.Output{Status: lz.Refused}
	outDone    = lz.Output{Status: lz.Done}
)

// errNotWritten is returned by fenced work that found its context ended
// before it wrote: the write certainly did not happen.
var errNotWritten = errors.New("torture: lease lost before the write")

// record records the operation do performs: its call before, its
// output after.
func (w *worker) record(key string, k lz.Kind, in lz.Input, do func(ctx context.Context) lz.Output) error {
	return w.recordOn(w.rec, key, k, in, do)
}

// recordOn is record, on the recorder rec.
func (w *worker) recordOn(rec *lz.Recorder, key string, k lz.Kind, in lz.Input, do func(ctx context.Context) lz.Output) error {
	p, err := rec.Begin(key, k, in)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	out := do(ctx)
	if out.Status == lz.Unknown {
		// The store is likely down (a server stopped): back off rather
		// than fill the history with failures the checker must place.
		defer time.Sleep(w.a.TTL / 2)
	}
	return p.End(out)
}

// leaseRound acquires key's lease; refused, it sometimes waits for it
// (AcquireWait). Holding it, it makes one to three fenced writes, maybe
// a read, and closes it. Refused in the end, it reads. Now and
// then it holds a second key's lease at once, so that the manager renews
// several handles together and bugs between handles of one process meet
// the checks; its writes then go to either lease.
func (w *worker) leaseRound(key string) error {
	l, err := w.acquireOp(key)
	if err == nil && l == nil && w.rng.IntN(3) == 0 {
		l, err = w.waitOp(key)
	}
	if err != nil || l == nil {
		return errors.Join(err, w.readOp(key))
	}
	held := []*lease.Lease{l}
	if w.a.Keys > 1 && w.rng.IntN(3) == 0 {
		other := fmt.Sprintf("k%d", (keyIndex(key)+1+w.rng.IntN(w.a.Keys-1))%w.a.Keys)
		l2, err := w.acquireOp(other)
		if err != nil {
			return err
		}
		if l2 != nil {
			held = append(held, l2)
		}
	}
	for range 1 + w.rng.IntN(3*len(held)) {
		w.nap()
		h := held[w.rng.IntN(len(held))]
		if err := w.writeOp(h.Key(), h); err != nil {
			return err
		}
	}
	if w.rng.IntN(2) == 0 {
		if err := w.readOp(key); err != nil {
			return err
		}
	}
	for _, h := range held {
		if err := w.releaseOp(h); err != nil {
			return err
		}
	}
	return nil
}

// acquireOp acquires key's lease: nil, with no error, when it is held.
func (w *worker) acquireOp(key string) (*lease.Lease, error) {
	var l *lease.Lease
	err := w.record(key, lz.Acquire, lz.Input{}, func(ctx context.Context) lz.Output {
		var err error
		l, err = w.mgr.Acquire(ctx, key)
		switch {
		case err == nil:
			return lz.Output{Status: lz.OK, Gen: uint64(l.Token())}
		case errors.Is(err, lease.ErrHeld):
			return outRefused
		}
		return unknown(ctx, err)
	})
	return l, err
}

// releaseOp closes l.
func (w *worker) releaseOp(l *lease.Lease) error {
	return w.record(l.Key(), lz.Release, lz.Input{Token: uint64(l.Token())}, func(ctx context.Context) lz.Output {
		if err := l.Close(); err != nil {
			return unknown(ctx, err)
		}
		return outDone // Close says nothing of whether its tombstone was written
	})
}

// keyIndex is the number of a key named k<i>.
func keyIndex(key string) int {
	i, _ := strconv.Atoi(strings.TrimPrefix(key, "k"))
	return i
}

// writeOp makes one fenced write of a new value with l's token.
func (w *worker) writeOp(key string, l *lease.Lease) error {
	w.seq++
	v := fmt.Sprintf("p%d.%d", w.a.Process, w.seq)
	return w.record(key, lz.Write, lz.Input{Token: uint64(l.Token()), Value: v}, func(ctx context.Context) lz.Output {
		ran := false
		err := l.RunFenced(ctx, func(ctx context.Context, _ lease.Token) error {
			ran = true
			leave, err := w.section(key)
			if err != nil {
				return err
			}
			defer leave()
			// A section long enough for pauses to land in it: the
			// fence must keep a successor out until it ends.
			w.nap()
			if ctx.Err() != nil {
				return errNotWritten
			}
			return w.res.Write(ctx, key, v)
		})
		out := writeOutput(ctx, err, ran)
		if out.Status == lz.Refused {
			w.note(noteRefused)
		}
		return out
	})
}

// section records entering key's fence, and returns the function that
// records leaving it: both inside the fenced section, so that the
// recorded section lies within the real one and two recorded sections of
// one key overlap only if the fence let two holders in.
func (w *worker) section(key string) (leave func(), err error) {
	if err := w.rec.Instant(key, lz.Enter, lz.Input{}, outOK); err != nil {
		return nil, err
	}
	return func() { _ = w.rec.Instant(key, lz.Leave, lz.Input{}, outOK) }, nil
}

// writeOutput classifies a fenced write, its context ctx: refused only
// when the work certainly did not write (RunFenced refused to run it, or
// it found its context ended first); any other failure is of unknown
// outcome.
func writeOutput(ctx context.Context, err error, ran bool) lz.Output {
	switch {
	case err == nil:
		return outOK
	case !ran && (errors.Is(err, lease.ErrLost) || errors.Is(err, lease.ErrReleased)):
		return outRefused
	case ran && errors.Is(err, errNotWritten):
		return outRefused
	}
	return unknown(ctx, err)
}

// readOp reads key's value under its fence.
func (w *worker) readOp(key string) error {
	return w.record(key, lz.Read, lz.Input{}, func(ctx context.Context) lz.Output {
		unlock, err := w.repo.Fence(ctx, key)
		if err != nil {
			return unknown(ctx, err)
		}
		defer unlock()
		leave, err := w.section(key)
		if err != nil {
			return unknown(ctx, err)
		}
		defer leave()
		v, err := w.res.Read(ctx, key)
		if err != nil {
			return unknown(ctx, err)
		}
		return lz.Output{Status: lz.OK, Value: v}
	})
}

// lockRound tries key's process lock without waiting; holding it, it
// naps and gives it back.
func (w *worker) lockRound(key string) error {
	path := procLockPath(w.a.Dir, key)
	var l *plock.Lock
	err := w.record(key, lz.Lock, lz.Input{}, func(ctx context.Context) lz.Output {
		var err error
		l, err = plock.Acquire(ctx, w.lockPlat, path, plock.Options{})
		switch {
		case err == nil:
			return outOK
		case errors.Is(err, plock.ErrHeld):
			return outRefused
		}
		return unknown(ctx, err)
	})
	if err != nil || l == nil {
		return err
	}
	w.nap()
	return w.record(key, lz.Unlock, lz.Input{}, func(ctx context.Context) lz.Output {
		if err := l.Release(); err != nil {
			return unknown(ctx, err)
		}
		return outOK
	})
}
