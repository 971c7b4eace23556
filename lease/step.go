package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/policy"
)

// The manager runs the lease step of internal/leasestep, the one the
// lease world model-checks: the step decides which call comes next and
// with what, the facts of a record and what each answer fires; the
// manager makes the calls, outside its lock, and carries out the effects
// through handleEnv, under it.

// reply is how the step answered a handle's pending Acquire or Close.
type reply uint8

const (
	replyAcquired reply = 1 << iota
	replyHeld
	replyRepoError
)

// handleEnv is a handle as the lease step sees it: a leasestep.Env whose
// methods run with the manager's lock held.
type handleEnv Lease

var _ leasestep.Env[time.Duration] = (*handleEnv)(nil)

// env returns h as the step's Env.
func (h *Lease) env() *handleEnv { return (*handleEnv)(h) }

func (e *handleEnv) lease() *Lease { return (*Lease)(e) }

func (e *handleEnv) Now() time.Duration { return e.m.now() }

func (e *handleEnv) Sighting() (store.Revision, bool) {
	s, ok := e.m.seen[e.key]
	return s.rev, ok
}

// Sight notes rev as first seen now, on the manager's monotonic clock.
func (e *handleEnv) Sight(rev store.Revision) { e.m.seen[e.key] = sighting{rev: rev, at: e.m.now()} }

func (e *handleEnv) Unsight() { delete(e.m.seen, e.key) }

// Silent reports whether TTL has passed since the sighting: at least the
// holder's own TTL, which bounds when it declares itself lost, and at
// least ours.
func (e *handleEnv) Silent() bool {
	s, ok := e.m.seen[e.key]
	return ok && e.m.now()-s.at >= max(e.loaded.Snapshot.TTL, e.m.cfg.TTL)
}

func (e *handleEnv) StopTimers() { e.lease().stopTimersLocked() }

// ArmDeadline makes DeadlinePassed fire the lifetime after from.
func (e *handleEnv) ArmDeadline(from time.Duration) {
	e.lease().armDeadlineLocked(e.m.lifetime() - (e.m.now() - from))
}

func (e *handleEnv) ScheduleRenew() { e.m.scheduleLocked(e.lease(), e.m.cfg.Heartbeat) }
func (e *handleEnv) ScheduleRetry() { e.m.scheduleLocked(e.lease(), e.m.retryDelay()) }

// DeclareLost ends the lease with the loss its driver foresaw, or, for a
// step that a custom policy made a loss, LostPolicy.
func (e *handleEnv) DeclareLost() {
	h := e.lease()
	loss := h.loss
	if loss == nil {
		loss = &LossError{Key: h.key, Token: h.token, Cause: LostPolicy}
	}
	e.m.emitLocked(Event{Kind: Lost, Key: e.key, Token: e.token, Err: loss})
	h.endLocked(loss)
}

func (e *handleEnv) AnswerFence(run bool) { e.fenceRun = run }

// Acquired makes the handle live, with the token it claimed.
func (e *handleEnv) Acquired() {
	h := e.lease()
	h.token = h.step.Token
	h.reply |= replyAcquired
	e.m.live[h] = struct{}{}
	rec := h.step.Read
	e.m.emitLocked(Event{Kind: Acquired, Key: h.key, Token: h.token, takeover: !rec.Free})
	if !rec.Free {
		prev := h.loaded.Snapshot.Holder
		e.m.emitLocked(Event{Kind: TakenOver, Key: h.key, Token: h.token, Previous: &prev, PreviousDead: rec.Liveness == platform.Dead})
	}
}

func (e *handleEnv) HeldError() { e.reply |= replyHeld }
func (e *handleEnv) RepoError() { e.reply |= replyRepoError }

func (e *handleEnv) EndHandle() {
	h := e.lease()
	if h.err == nil {
		e.m.emitLocked(Event{Kind: Released, Key: h.key, Token: h.token})
	}
	released := ErrReleased
	if e.m.closing {
		released = errReleasedByClose
	}
	h.endLocked(released)
	delete(e.m.live, h)
}

// Fault panics: the policy does not fit this runtime, or the runtime
// broke the step's duties.
func (e *handleEnv) Fault(f leasestep.Fault, t policy.TriggerID, o policy.Outputs) {
	pol := e.m.pol
	msg := fmt.Sprintf("lease: policy %s cannot run: it would %s on %s in state %s", pol.Name(), f,
		pol.Table().Triggers[t].Name, pol.Table().States[e.step.State].Name)
	if o != 0 {
		msg += " (" + leaseFamily.FormatOutputs(o) + ")"
	}
	panic(msg)
}

// steppedLocked hands step s of h to the contract monitor and returns its
// outputs.
func (m *Manager) steppedLocked(h *Lease, s leasestep.Step) policy.Outputs {
	h.loss = nil
	if monitoring {
		m.monitorLocked(h, s)
	}
	return s.Outputs()
}

// callsLocked makes h's repository calls, as the step asks for them, and
// answers each, until the step asks for none. It is called and returns
// with m.mu held, which it lets go during each call. It returns the error
// of the last call.
func (m *Manager) callsLocked(ctx context.Context, h *Lease) error {
	var err error
	for h.step.Call != leasestep.CallNone {
		call, w, acquiring := h.step.Call, h.step.Write, h.step.Life == leasestep.LifeAcquiring
		m.unlockAndReport()
		var (
			a   leasestep.Answer
			rec store.Record
		)
		a, rec, err = m.call(ctx, h, call, w, acquiring)
		m.mu.Lock()
		if call == leasestep.CallLoad && acquiring {
			h.loaded = rec
		}
		m.steppedLocked(h, leasestep.Answered(m.pol, h.env(), &h.step, a))
		m.cond.Broadcast()
	}
	return err
}

// call makes one repository call of h: a load (its holder judged, for an
// acquisition, which is I/O) or a save of w.
func (m *Manager) call(ctx context.Context, h *Lease, call leasestep.Call, w leasestep.Write, judge bool) (leasestep.Answer, store.Record, error) {
	if call == leasestep.CallLoad {
		rec, ok, err := m.loadFor(ctx, h, false)
		if err != nil {
			return leasestep.Answer{Result: leasestep.Failed}, rec, err
		}
		r := stepRecord(rec, ok)
		if judge && !r.Free {
			r.Liveness = m.p.Process.Judge(rec.Snapshot.Holder).Liveness
		}
		return leasestep.Answer{Rec: r}, rec, nil
	}
	if w.Generation == 0 { // one above the largest generation
		err := &store.RepositoryError{Op: "claim", Key: h.key, Err: errors.New("the generation cannot grow past its largest value")}
		return leasestep.Answer{Result: leasestep.Failed}, store.Record{}, err
	}
	rev, err := m.saveFor(ctx, h, h.snapshot(w.Generation, w.Released), w.Expected)
	return saveAnswer(rev, err), store.Record{}, err
}

// saveAnswer is a save's answer to the step.
func saveAnswer(rev store.Revision, err error) leasestep.Answer {
	switch {
	case err == nil:
		return leasestep.Answer{Rev: rev}
	case errors.Is(err, store.ErrRevisionConflict):
		return leasestep.Answer{Result: leasestep.Conflict}
	}
	return leasestep.Answer{Result: leasestep.Failed}
}

// stepRecord is a loaded record as the step reads it; ok says whether
// there was one.
func stepRecord(rec store.Record, ok bool) leasestep.Record {
	if !ok {
		return leasestep.Record{Free: true}
	}
	return leasestep.Record{Revision: rec.Revision, Generation: rec.Snapshot.Generation, Free: rec.Snapshot.Released}
}
