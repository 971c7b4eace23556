package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/lease/store"
)

// RunFenced runs fn while holding the repository's per-key fence, after
// re-reading the record under it: fn starts only if the record still holds
// this lease's generation. fn's ctx is cancelled with cause ErrLost when
// the lease is lost (ErrReleased when it is closed, ErrFenceLost when a
// store.FenceWatcher repository loses the fence under it); waiting for the fence
// stops then too. The fence is released when fn returns, so a successor's
// fenced work starts after that.
//
// Go cannot stop fn: it must return soon after its ctx is cancelled, and
// must not write after that. The fence plus the re-read is as strong as a
// check by the protected resource only when every writer goes through the
// same repository; a resource that can compare atomically should keep the
// highest token it has seen and refuse smaller ones.
func (h *Lease) RunFenced(ctx context.Context, fn func(ctx context.Context, token Token) error) error {
	fctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	m := h.m
	m.mu.Lock()
	h.addFencedLocked(&cancel)
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(h.fenced, &cancel)
		m.mu.Unlock()
	}()
	var waited time.Duration
	if m.cfg.Metrics != nil {
		waited = m.now()
	}
	unlock, lost, err := h.takeFence(fctx)
	if m.cfg.Metrics != nil {
		m.cfg.Metrics.FenceWaited(m.now() - waited)
	}
	if err != nil {
		return err
	}
	defer unlock()
	if lost != nil {
		// Ends when fctx does, at the latest when RunFenced returns.
		go func() {
			select {
			case <-lost:
				cancel(ErrFenceLost)
			case <-fctx.Done():
			}
		}()
	}
	rec, ok, err := m.loadFor(fctx, h, true)
	if err != nil {
		return err
	}
	m.mu.Lock()
	h.fenceRun = false
	var seen *store.Snapshot
	if ok {
		seen = &rec.Snapshot
	}
	h.loss = movedLoss(h, nil, seen)
	m.steppedLocked(h, leasestep.FenceTaken(m.pol, h.env(), &h.step, stepRecord(rec, ok)))
	run, lostErr := h.fenceRun, h.err
	m.unlockAndReport()
	if !run {
		if lostErr == nil {
			lostErr = ErrLost
		}
		return lostErr
	}
	select {
	case <-lost: // lost already, between taking it and now (a nil lost never is)
		return ErrFenceLost
	default:
	}
	err = fn(fctx, h.token)
	if cause := context.Cause(fctx); err != nil && (errors.Is(cause, ErrLost) || errors.Is(cause, ErrReleased) || cause == ErrFenceLost) && !errors.Is(err, cause) {
		return fmt.Errorf("%w: %w", cause, err)
	}
	return err
}
