//go:build unix

package torture

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	lz "github.com/rivus/collab/linearizability"
	"github.com/rivus/collab/platform"
)

// reapTimeout bounds the wait for a killed child to be reaped, and
// stopTimeout the wait for the workers to finish after being told to.
const (
	reapTimeout = 10 * time.Second
	stopTimeout = opTimeout + 10*time.Second
)

// controller starts, faults and stops the workers of one campaign, and
// records each kill in its own history file, and each pause in the
// pauses file.
type controller struct {
	cfg      Config
	rng      *rand.Rand
	rec      *lz.Recorder
	hist     *os.File
	pauses   *os.File
	children []*child
	next     int // the next worker's process number
	exited   chan *child
	quit     chan struct{}
	stats    Stats
	tally    *tally
	start    time.Time
	srv      serverState
}

func newController(cfg Config) (*controller, error) {
	hist, err := appendFile(procFile(cfg.Dir, historyDir, controllerProcess, ".jsonl"))
	if err != nil {
		return nil, err
	}
	pauses, err := appendFile(filepath.Join(cfg.Dir, eventsDir, pausesFile))
	if err != nil {
		return nil, errors.Join(err, hist.Close())
	}
	return &controller{cfg: cfg, rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0)), hist: hist, pauses: pauses,
		rec: lz.NewRecorder(hist, controllerProcess, platform.RealClock()), next: controllerProcess + 1,
		exited: make(chan *child), quit: make(chan struct{}), tally: newTally(cfg.Dir), start: time.Now()}, nil
}

// run starts the workers and makes faults until the campaign is done,
// then stops the workers.
func (c *controller) run(ctx context.Context) (Stats, error) {
	for range c.cfg.Workers {
		if err := c.spawn(); err != nil {
			return c.snapshot(), err
		}
	}
	err := errors.Join(c.loop(ctx), c.endServerFault()) // the workers close their leases on a running server
	return c.snapshot(), errors.Join(err, c.stopAll())
}

// loop makes faults at random moments until the targets are met or ctx
// ends (then the targets were missed).
func (c *controller) loop(ctx context.Context) error {
	nextKill, nextPause := c.after(c.cfg.KillEvery), c.after(c.cfg.PauseEvery)
	c.startServerFaults()
	progress := time.NewTicker(500 * time.Millisecond)
	defer progress.Stop()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		now := time.Now()
		var err error
		switch {
		case !nextKill.IsZero() && !now.Before(nextKill):
			err, nextKill = c.killOne(), c.after(c.cfg.KillEvery)
		case !nextPause.IsZero() && !now.Before(nextPause):
			err, nextPause = c.pauseOne(), c.after(c.cfg.PauseEvery)
		case !c.srv.next.IsZero() && !now.Before(c.srv.next):
			err = c.serverFault()
		default:
			err = c.resumeDue(now)
		}
		if err != nil {
			return err
		}
		timer.Reset(time.Until(c.wake(nextKill, nextPause, c.srv.next)))
		select {
		case <-ctx.Done():
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return context.Cause(ctx)
			}
			return &TargetError{Stats: c.snapshot(), Config: c.cfg}
		case ch := <-c.exited:
			return c.ended(ch)
		case <-progress.C:
			s := c.snapshot()
			if c.cfg.Progress != nil {
				c.cfg.Progress(s)
			}
			if met(s, c.cfg) {
				return nil
			}
		case <-timer.C:
		}
	}
}

// after returns a moment an exponential gap of mean away, or zero for
// never (a negative mean).
func (c *controller) after(mean time.Duration) time.Time {
	if mean < 0 {
		return time.Time{}
	}
	return time.Now().Add(time.Duration(c.rng.ExpFloat64() * float64(mean)))
}

// wake returns the next moment something is due.
func (c *controller) wake(times ...time.Time) time.Time {
	w := time.Now().Add(time.Second)
	for _, ch := range c.children {
		if ch.paused {
			times = append(times, ch.resume)
		}
	}
	for _, t := range times {
		if !t.IsZero() && t.Before(w) {
			w = t
		}
	}
	return w
}

// spawn starts a worker with a new process number.
func (c *controller) spawn() error {
	ch, err := startChild(c.cfg, c.next, c.exited, c.quit)
	if err != nil {
		return fmt.Errorf("torture: starting worker p%d: %w", c.next, err)
	}
	if inOwnPIDNamespace(c.cfg, c.next) {
		c.stats.InPIDNamespaces++
	}
	c.next++
	c.stats.Started++
	c.children = append(c.children, ch)
	return nil
}

// killOne SIGKILLs a random worker, recording the crash around the kill
// and the reaping, and starts a new worker in its place.
func (c *controller) killOne() error {
	ch := c.children[c.rng.IntN(len(c.children))]
	if err := c.crash(ch); err != nil {
		return err
	}
	c.stats.Kills++
	return c.spawn()
}

// crash kills ch and reaps it, recorded as a crash of its process (and
// the end of its pause, if it was paused).
func (c *controller) crash(ch *child) error {
	p, err := c.rec.BeginCrash(ch.process)
	if err != nil {
		return err
	}
	ch.kill()
	reaped, err := c.reap(ch)
	if !reaped {
		return err
	}
	if ch.paused {
		err = errors.Join(err, c.notePause(ch))
	}
	return errors.Join(err, p.End(lz.Output{Status: lz.OK}))
}

// reap waits, bounded, until ch is reaped, taking its exit report, and
// forgets it. Other workers that exit meanwhile ended on their own:
// they are forgotten too, and reported as *WorkerError.
func (c *controller) reap(ch *child) (reaped bool, err error) {
	t := time.NewTimer(reapTimeout)
	defer t.Stop()
	var errs []error
	for {
		select {
		case x := <-c.exited:
			if x == ch {
				c.forget(ch)
				return true, errors.Join(errs...)
			}
			errs = append(errs, c.ended(x))
		case <-t.C:
			errs = append(errs, fmt.Errorf("torture: worker p%d not reaped %v after SIGKILL", ch.process, reapTimeout))
			return false, errors.Join(errs...)
		}
	}
}

// ended forgets ch, a worker reaped after it ended on its own, so that
// nothing waits for it again, and returns the *WorkerError reporting it.
func (c *controller) ended(ch *child) error {
	c.forget(ch)
	return workerError(ch)
}

// workerError reports ch, reaped, as a worker that ended on its own.
func workerError(ch *child) error {
	return &WorkerError{Process: ch.process, Err: ch.err, Log: ch.log.Name()}
}

// forget removes ch, reaped, from the running children.
func (c *controller) forget(ch *child) {
	c.children = slices.DeleteFunc(c.children, func(x *child) bool { return x == ch })
}

// pauseOne SIGSTOPs a random running worker for Pause to Pause × 2,
// keeping at least half of them running.
func (c *controller) pauseOne() error {
	var running []*child
	for _, ch := range c.children {
		if !ch.paused {
			running = append(running, ch)
		}
	}
	if len(running) <= len(c.children)/2 {
		return nil
	}
	ch := running[c.rng.IntN(len(running))]
	ch.stoppedAt = platform.RealClock().Monotonic()
	if err := ch.stop(); err != nil {
		return fmt.Errorf("torture: SIGSTOP to worker p%d: %w", ch.process, err)
	}
	ch.paused, ch.stopped = true, time.Now()
	ch.resume = ch.stopped.Add(c.cfg.Pause + time.Duration(c.rng.Int64N(int64(c.cfg.Pause))))
	return nil
}

// resumeDue continues the paused workers whose pause is over.
func (c *controller) resumeDue(now time.Time) error {
	for _, ch := range c.children {
		if !ch.paused || now.Before(ch.resume) {
			continue
		}
		if err := ch.cont(); err != nil {
			return fmt.Errorf("torture: SIGCONT to worker p%d: %w", ch.process, err)
		}
		ch.paused = false
		if now.Sub(ch.stopped) >= c.cfg.Pause {
			c.stats.Pauses++
		}
		if err := c.notePause(ch); err != nil {
			return err
		}
	}
	return nil
}

// notePause appends ch's pause, which just ended, to the pauses file, in
// one write: the summary counts the operations of unknown outcome that a
// pause overlapped as paused (see unknownReasons).
func (c *controller) notePause(ch *child) error {
	if _, err := fmt.Fprintf(c.pauses, pauseLine, ch.process, ch.stoppedAt, platform.RealClock().Monotonic()); err != nil {
		return fmt.Errorf("torture: recording the pause of worker p%d: %w", ch.process, err)
	}
	return nil
}

// snapshot returns the stats, with the files' counts brought up to date.
func (c *controller) snapshot() Stats {
	c.tally.update()
	s := c.stats
	s.Ops = c.tally.ops
	s.Takeovers = c.tally.notes[noteTakeover]
	s.Refused = c.tally.notes[noteRefused]
	s.Lost = c.tally.notes[noteLost]
	s.Waits = c.tally.notes[noteWait]
	s.Handovers = c.tally.notes[noteWaited]
	s.Breaks = c.tally.notes[noteBroke]
	s.Terms = c.tally.notes[noteTerm]
	s.TermsLost = c.tally.notes[noteTermLost]
	s.CommandLocks = c.tally.notes[noteCommandLock]
	s.CommandOrphans = c.tally.notes[noteCommandOrphan]
	s.CommandKernel = c.tally.notes[noteCommandKernel]
	s.CommandRefused = c.tally.notes[noteCommandRefused]
	s.LeaseRuns = c.tally.notes[noteLeaseRun]
	s.LeaseRunsTimedOut = c.tally.notes[noteLeaseRunTimedOut]
	s.StaleWrites = c.tally.stale.n
	s.CutOff = c.tally.cut.count(c.stats.Outages, c.cfg.TTL)
	s.Outages = slices.Clone(s.Outages)
	s.Elapsed = time.Since(c.start)
	return s
}

// stopAll tells every worker to finish (closing its stdin, continuing
// it if paused) and waits, bounded, for them to exit; stragglers are
// killed, recorded as crashes.
func (c *controller) stopAll() error {
	errs := []error{writeStopping(c.cfg.Dir)}
	for _, ch := range c.children {
		_ = ch.stdin.Close()
		if ch.paused {
			errs = append(errs, ch.cont(), c.notePause(ch))
			ch.paused = false
		}
	}
	deadline := time.NewTimer(stopTimeout)
	defer deadline.Stop()
	for len(c.children) > 0 {
		select {
		case ch := <-c.exited:
			c.forget(ch)
			if ch.err != nil {
				errs = append(errs, workerError(ch))
			}
		case <-deadline.C:
			errs = append(errs, fmt.Errorf("torture: %d workers still running %v after being told to stop", len(c.children), stopTimeout))
			return errors.Join(append(errs, c.killAll())...)
		}
	}
	return errors.Join(errs...)
}

// killAll kills every remaining worker, each recorded as a crash, and
// reaps them in whatever order they exit, bounded by reapTimeout.
func (c *controller) killAll() error {
	var errs []error
	crashes := make(map[*child]*lz.Pending, len(c.children))
	for _, ch := range c.children {
		p, err := c.rec.BeginCrash(ch.process)
		if err != nil {
			errs = append(errs, err)
		}
		crashes[ch] = p
		ch.kill()
	}
	t := time.NewTimer(reapTimeout)
	defer t.Stop()
	for len(c.children) > 0 {
		select {
		case x := <-c.exited:
			c.forget(x)
			if p := crashes[x]; p != nil {
				errs = append(errs, p.End(lz.Output{Status: lz.OK}))
			}
		case <-t.C:
			return errors.Join(append(errs, fmt.Errorf("torture: %d workers not reaped %v after SIGKILL", len(c.children), reapTimeout))...)
		}
	}
	return errors.Join(errs...)
}

// close kills and reaps whatever still runs (on an error path), then
// closes the controller's history file.
func (c *controller) close() error {
	srvErr := c.endServerFault() // on an error path: leave the server running
	for _, ch := range c.children {
		ch.kill()
	}
	close(c.quit)
	for _, ch := range c.children {
		<-ch.done // SIGKILL cannot be ignored: the wait is short
	}
	c.children = nil
	return errors.Join(srvErr, c.hist.Close(), c.pauses.Close())
}
