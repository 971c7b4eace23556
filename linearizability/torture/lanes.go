package torture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rivus/collab/lanes"
)

// LanesConfig describes a lanes campaign (RunLanes). Zero fields take
// the defaults WithDefaults documents.
type LanesConfig struct {
	// Seed drives the wakers' choices (0 means 1); the goroutines'
	// timing still differs from run to run.
	Seed int64
	// Duration is how long wakers wake and cancel (default 5s).
	Duration time.Duration
	// Keys (default 16), Wakers (goroutines that wake and cancel,
	// default 8), MaxConcurrent (default 4), MaxQueued (default 6) and
	// TurnTimeout (default 5ms) shape the lanes.
	Keys, Wakers, MaxConcurrent, MaxQueued int
	TurnTimeout                            time.Duration
	// Lifetime is the longest that one set of lanes lives before it is
	// closed under the wakers and replaced (default 500ms; each lives
	// between a fifth of it and all of it).
	Lifetime time.Duration
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c LanesConfig) WithDefaults() LanesConfig {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Duration == 0 {
		c.Duration = 5 * time.Second
	}
	def(&c.Keys, 16)
	def(&c.Wakers, 8)
	def(&c.MaxConcurrent, 4)
	def(&c.MaxQueued, 6)
	if c.TurnTimeout == 0 {
		c.TurnTimeout = 5 * time.Millisecond
	}
	if c.Lifetime == 0 {
		c.Lifetime = 500 * time.Millisecond
	}
	return c
}

// Validate reports the first invalid field of c (after WithDefaults) as
// a *ConfigError.
func (c LanesConfig) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Field: "Lanes." + field, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case c.Duration <= 0:
		return bad("Duration", "is %v; want more than 0", c.Duration)
	case c.Keys < 1 || c.Keys > 10000:
		return bad("Keys", "is %d; want 1 to 10000", c.Keys)
	case c.Wakers < 1 || c.Wakers > 256:
		return bad("Wakers", "is %d; want 1 to 256", c.Wakers)
	case c.MaxConcurrent < 1:
		return bad("MaxConcurrent", "is %d; want at least 1", c.MaxConcurrent)
	case c.MaxQueued < 1:
		return bad("MaxQueued", "is %d; want at least 1", c.MaxQueued)
	case c.TurnTimeout <= 0:
		return bad("TurnTimeout", "is %v; want more than 0", c.TurnTimeout)
	case c.Lifetime <= 0:
		return bad("Lifetime", "is %v; want more than 0", c.Lifetime)
	}
	return nil
}

// LanesStats are a lanes campaign's counts.
type LanesStats struct {
	Instances   int                      // sets of lanes made, each closed under the wakers
	Wakes       map[lanes.WakeResult]int // successful wakes by answer
	Full        int                      // wakes refused with ErrQueueFull
	Closed      int                      // wakes refused with ErrClosed
	Cancels     int                      // Cancel calls
	Activations int                      // Activate calls
	Exits       map[string]int           // OnExit reports: succeeded, failed, dropped, or interrupted by cause
	Elapsed     time.Duration            // the whole campaign, the check included
}

// LanesResult is a finished lanes campaign.
type LanesResult struct {
	Config LanesConfig
	Stats  LanesStats
	// Violations are the promises of package lanes the recorded events
	// break, each described; none in a sound run.
	Violations []string
}

// Failed reports whether the campaign found a violation.
func (r *LanesResult) Failed() bool { return len(r.Violations) > 0 }

// RunLanes runs a lanes campaign in this process: Wakers goroutines wake
// and cancel random keys of one set of lanes after another, each closed
// under them after a random lifetime; activations run quickly, sleep past
// the turn timeout, wait for their context, fail or panic, at random.
// Every wake, cancel, close, activation and OnExit report is recorded
// with the host's monotonic clock, from inside the call it records, and
// the record is checked against the promises of package lanes (see
// checkLanes). ctx ends the campaign early; the events so far are
// checked.
func RunLanes(ctx context.Context, cfg LanesConfig) (*LanesResult, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	r := newLanesRun(cfg)
	if err := r.run(ctx); err != nil {
		return nil, err
	}
	res := &LanesResult{Config: cfg, Stats: r.stats(), Violations: checkLanes(r.log.evs, cfg)}
	res.Stats.Elapsed = time.Since(start)
	return res, nil
}

// lanesRun is one lanes campaign under way.
type lanesRun struct {
	cfg  LanesConfig
	log  laneLog
	seq  []atomic.Int64 // per key: wakes numbered before their call
	cur  atomic.Pointer[laneInstance]
	stop chan struct{}
}

// laneInstance is one set of lanes and its number.
type laneInstance struct {
	n int
	l *lanes.Lanes[int]
}

func newLanesRun(cfg LanesConfig) *lanesRun {
	return &lanesRun{cfg: cfg, log: laneLog{start: time.Now()}, seq: make([]atomic.Int64, cfg.Keys), stop: make(chan struct{})}
}

// run makes and closes sets of lanes under the wakers until the duration
// has passed or ctx ends.
func (r *lanesRun) run(ctx context.Context) error {
	rng := rand.New(rand.NewPCG(uint64(r.cfg.Seed), 1<<32))
	if err := r.open(0); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for w := range r.cfg.Wakers {
		wg.Go(func() { r.waker(rand.New(rand.NewPCG(uint64(r.cfg.Seed), uint64(w)+2))) })
	}
	end := time.NewTimer(r.cfg.Duration)
	defer end.Stop()
	var err error
	for n := 1; err == nil; n++ {
		life := r.cfg.Lifetime/5 + time.Duration(rng.Int64N(int64(r.cfg.Lifetime)*4/5+1))
		t := time.NewTimer(life)
		select {
		case <-t.C:
			err = errors.Join(r.closeCurrent(), r.open(n))
			continue
		case <-end.C:
		case <-ctx.Done():
		}
		t.Stop()
		break
	}
	close(r.stop)
	wg.Wait()
	if err == nil {
		r.drain(r.cur.Load().n)
	}
	return errors.Join(err, r.closeCurrent())
}

// drainPatience bounds the wait, once the wakers have stopped, for the
// last set of lanes to serve every wake it answered: an activation ends
// within twice the turn timeout, so a wake still owed that long after
// was lost (a slot never given back, a wake forgotten).
const drainPatience = 10 * time.Second

// drain waits until set n of lanes has served (or reported dropped)
// every wake it answered, or drainPatience has passed: then it records
// the stall, which checkLanes reports.
func (r *lanesRun) drain(n int) {
	deadline := time.Now().Add(drainPatience)
	for {
		w := r.log.owed(n)
		if w == nil {
			return
		}
		if time.Now().After(deadline) {
			r.log.add(laneEvent{kind: laneStall, inst: n, key: w.key, seq: w.seq, result: w.result, call: w.call})
			return
		}
		// A poll, bounded: nothing tells when a set of lanes is idle.
		time.Sleep(5 * time.Millisecond)
	}
}

// open makes instance n the current set of lanes.
func (r *lanesRun) open(n int) error {
	inst := &laneInstance{n: n}
	l, err := lanes.New(context.Background(), lanes.Config[int]{
		MaxConcurrent: r.cfg.MaxConcurrent, MaxQueued: r.cfg.MaxQueued, TurnTimeout: r.cfg.TurnTimeout,
		Activate: func(ctx context.Context, key int) error { return r.activate(ctx, n, key) },
		OnExit:   func(key int, exit lanes.Exit) { r.log.add(laneEvent{kind: laneExit, inst: n, key: key, exit: exit}) },
	})
	if err != nil {
		return err
	}
	inst.l = l
	r.cur.Store(inst)
	return nil
}

// closeCurrent closes the current set of lanes, recorded.
func (r *lanesRun) closeCurrent() error {
	inst := r.cur.Load()
	call := r.log.now()
	err := inst.l.Close()
	r.log.add(laneEvent{kind: laneClose, inst: inst.n, key: -1, call: call, err: err})
	return err
}

// waker wakes random keys, and now and then cancels one, until stop.
func (r *lanesRun) waker(rng *rand.Rand) {
	for {
		select {
		case <-r.stop:
			return
		default:
		}
		inst, key := r.cur.Load(), rng.IntN(r.cfg.Keys)
		if rng.IntN(20) == 0 {
			r.cancel(inst, key)
			continue
		}
		n := r.seq[key].Add(1)
		call := r.log.now()
		res, err := inst.l.Wake(key)
		r.log.add(laneEvent{kind: laneWake, inst: inst.n, key: key, seq: n, call: call, result: res, err: err})
		// A pause now and then lets the queue drain as well as fill.
		if rng.IntN(4) == 0 {
			time.Sleep(time.Duration(rng.IntN(200)) * time.Microsecond)
		} else {
			runtime.Gosched()
		}
	}
}

// cancelPatience bounds a Cancel: activations end soon after their
// context does, so one that takes longer is reported.
const cancelPatience = 10 * time.Second

// cancel cancels key, recorded.
func (r *lanesRun) cancel(inst *laneInstance, key int) {
	ctx, stop := context.WithTimeout(context.Background(), cancelPatience)
	defer stop()
	call := r.log.now()
	err := inst.l.Cancel(ctx, key)
	r.log.add(laneEvent{kind: laneCancel, inst: inst.n, key: key, call: call, err: err})
}

// Behaviours of an activation, chosen at random.
var (
	errOwn     = errors.New("torture: an activation's own error")
	panicValue = "torture: an activation's panic"
)

// activate is every activation: it records its start (with the key's
// wake number then) and its end (with what it returns, and the cause of
// its context if it saw one), and in between does one thing at random.
func (r *lanesRun) activate(ctx context.Context, inst, key int) (err error) {
	begin := laneEvent{kind: laneBegin, inst: inst, key: key, seq: r.seq[key].Load()}
	r.log.add(begin)
	end := laneEvent{kind: laneEnd, inst: inst, key: key}
	defer func() {
		if p := recover(); p != nil {
			end.panicked = true
			r.log.add(end)
			panic(p)
		}
		end.err = err
		r.log.add(end)
	}()
	switch n := rand.IntN(100); {
	case n < 50:
		for range rand.IntN(4) {
			runtime.Gosched()
		}
		return nil
	case n < 60: // runs past the turn timeout, or nearly, and succeeds anyway
		time.Sleep(time.Duration(rand.Int64N(int64(r.cfg.TurnTimeout) * 2)))
		return nil
	case n < 70: // returns as the turn timeout fires: a success all the same
		time.Sleep(r.cfg.TurnTimeout)
		return nil
	case n < 90: // waits for its context, up to twice the turn timeout
		t := time.NewTimer(2 * r.cfg.TurnTimeout)
		defer t.Stop()
		select {
		case <-ctx.Done():
			end.cause = context.Cause(ctx)
			return ctx.Err()
		case <-t.C:
			return nil
		}
	case n < 95:
		return errOwn
	}
	panic(panicValue)
}

// stats counts the events recorded.
func (r *lanesRun) stats() LanesStats {
	s := LanesStats{Wakes: map[lanes.WakeResult]int{}, Exits: map[string]int{}}
	instances := map[int]bool{}
	for _, e := range r.log.evs {
		instances[e.inst] = true
		switch e.kind {
		case laneWake:
			switch {
			case e.err == nil:
				s.Wakes[e.result]++
			case errors.Is(e.err, lanes.ErrQueueFull):
				s.Full++
			case errors.Is(e.err, lanes.ErrClosed):
				s.Closed++
			}
		case laneCancel:
			s.Cancels++
		case laneBegin:
			s.Activations++
		case laneExit:
			s.Exits[exitName(e.exit)]++
		}
	}
	s.Instances = len(instances)
	return s
}

// exitName names an exit for the counts: succeeded, failed, dropped, or
// interrupted by its cause.
func exitName(x lanes.Exit) string {
	switch x := x.(type) {
	case lanes.Interrupted:
		switch {
		case !x.Started:
			return "dropped"
		case errors.Is(x.Cause, lanes.ErrCancelled):
			return "cancelled"
		case errors.Is(x.Cause, lanes.ErrTurnTimeout):
			return "timed out"
		case errors.Is(x.Cause, lanes.ErrClosed):
			return "closed"
		}
		return "interrupted"
	case lanes.Failed:
		return "failed"
	}
	return "succeeded"
}

// maxPrinted bounds the violations Print lists.
const maxPrinted = 20

// Print writes the summary: the settings, the counts, and the verdict
// with the violations found.
func (r *LanesResult) Print(w io.Writer) {
	c, s := r.Config, r.Stats
	fmt.Fprintf(w, "lanes campaign: %d sets of lanes closed under %d wakers, %d keys, MaxConcurrent %d, MaxQueued %d, turn timeout %v, seed %d, %v\n",
		s.Instances, c.Wakers, c.Keys, c.MaxConcurrent, c.MaxQueued, c.TurnTimeout, c.Seed, s.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "wakes: %d started, %d queued, %d coalesced, %d refused as the queue was full, %d as the lanes were closed; %d cancels\n",
		s.Wakes[lanes.Started], s.Wakes[lanes.Queued], s.Wakes[lanes.Coalesced], s.Full, s.Closed, s.Cancels)
	fmt.Fprintf(w, "activations: %d; exits heard: %d succeeded, %d failed, %d cancelled, %d timed out, %d closed, %d dropped before they started\n",
		s.Activations, s.Exits["succeeded"], s.Exits["failed"], s.Exits["cancelled"], s.Exits["timed out"], s.Exits["closed"], s.Exits["dropped"])
	if !r.Failed() {
		fmt.Fprintln(w, "lanes: every promise kept")
		return
	}
	fmt.Fprintf(w, "lanes: %d VIOLATIONS of the promises of package lanes\n", len(r.Violations))
	for i, v := range r.Violations {
		if i == maxPrinted {
			fmt.Fprintf(w, "  ... and %d more\n", len(r.Violations)-i)
			break
		}
		fmt.Fprintf(w, "  %s\n", v)
	}
}
