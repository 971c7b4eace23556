package torture

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/leader"
	lz "github.com/rivus/collab/linearizability"
)

// leaderKey is the election every worker's leader rounds run for.
const leaderKey = "leader"

// Words of the events file for leader rounds.
const (
	noteTerm     = "term"     // a term began (OnStarted)
	noteTermLost = "termlost" // a term ended with the lease lost
)

// leaderRound campaigns for leadership of leaderKey (lease/leader.Run)
// for one to four TTLs. Each term is recorded on the key's lease object:
// its acquisition, from the moment the campaign (re)began to OnStarted,
// as an Acquire with the term's token; its work, fenced writes that the
// resource takes only under the key's fence and only while the record
// holds the term's token, as Writes with that token; its end, from
// Lead's return to OnStopped, as a Release of the token of unknown
// outcome: a lease lost as Run's context ended is not let go, and Run
// says nothing of it. So a term given a token the lease did not hold, or
// its writes outside the record's holding of that token, are violations.
func (w *worker) leaderRound() error {
	ctx, cancel := context.WithTimeout(context.Background(), w.a.TTL*time.Duration(1+w.rng.IntN(4)))
	defer cancel()
	t := &termRecorder{w: w}
	if err := t.campaign(); err != nil {
		return err
	}
	err := leader.Run(ctx, leader.Config{Manager: w.mgr, Key: leaderKey, RetryPeriod: w.a.TTL / 2,
		OnStarted: t.started, Lead: t.lead, OnStopped: t.stopped})
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, lease.ErrClosed) {
		t.fail(fmt.Errorf("torture: leader.Run ended with %w", err))
	}
	// Run ended while campaigning: an attempt under way may have
	// acquired the lease, which Run then let go.
	t.end(unknownFor(reasonUnreported))
	return t.err
}

// termRecorder records the terms of one leaderRound. Run calls its
// callbacks one at a time; the mutex keeps the race detector's view of
// the goroutines Run runs them on simple.
type termRecorder struct {
	w       *worker
	mu      sync.Mutex
	pending *lz.Pending // the acquisition or the release under way
	err     error
}

// campaign records the start of an acquisition.
func (t *termRecorder) campaign() error {
	p, err := t.w.rec.Begin(leaderKey, lz.Acquire, lz.Input{})
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending = p
	return err
}

// end ends the operation under way, if any, with out.
func (t *termRecorder) end(out lz.Output) {
	t.mu.Lock()
	p := t.pending
	t.pending = nil
	t.mu.Unlock()
	if p != nil {
		t.fail(p.End(out))
	}
}

func (t *termRecorder) fail(err error) {
	if err == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.err = errors.Join(t.err, err)
}

func (t *termRecorder) started(token lease.Token) {
	t.w.note(noteTerm)
	t.end(lz.Output{Status: lz.OK, Gen: uint64(token)})
}

// lead makes fenced writes with the term's token until its ctx ends,
// then begins recording the term's release.
func (t *termRecorder) lead(ctx context.Context, token lease.Token) error {
	for ctx.Err() == nil {
		t.w.nap()
		t.fail(t.w.tokenWriteOp(leaderKey, token))
	}
	p, err := t.w.rec.Begin(leaderKey, lz.Release, lz.Input{Token: uint64(token)})
	t.fail(err)
	t.mu.Lock()
	t.pending = p
	t.mu.Unlock()
	return ctx.Err()
}

func (t *termRecorder) stopped(_ lease.Token, cause error) {
	t.end(unknownFor(reasonUnreported))
	if !errors.Is(cause, lease.ErrLost) {
		return // Run returns
	}
	t.w.note(noteTermLost)
	t.fail(t.campaign()) // Run campaigns again after a loss
}

// tokenWriteOp writes a new value to key under the key's fence if the
// record holds token, as a resource that checks a leader's token does.
func (w *worker) tokenWriteOp(key string, token lease.Token) error {
	w.seq++
	v := fmt.Sprintf("p%d.%d", w.a.Process, w.seq)
	return w.record(key, lz.Write, lz.Input{Token: uint64(token), Value: v}, func(ctx context.Context) lz.Output {
		unlock, err := w.repo.Fence(ctx, key)
		if err != nil {
			return unknown(ctx, err)
		}
		defer unlock()
		rec, ok, err := w.repo.Load(ctx, key)
		switch {
		case err != nil:
			return unknown(ctx, err)
		case !ok || rec.Snapshot.Generation != token || rec.Snapshot.Released:
			return outRefused
		}
		leave, err := w.section(key)
		if err != nil {
			return unknown(ctx, err)
		}
		defer leave()
		if err := w.res.Write(ctx, key, v); err != nil {
			return unknown(ctx, err)
		}
		return outOK
	})
}
