package lanes

import (
	"context"
	"fmt"
	"math/bits"
	"sync"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/internal/lanestep"
	"github.com/rivus/collab/policy"
)

// WakeResult says what a successful Wake did.
type WakeResult uint8

const (
	// Started: an activation of the key started.
	Started WakeResult = iota + 1
	// Queued: the key waits for a slot, or, while its activation runs,
	// owes one follow-up activation.
	Queued
	// Coalesced: an activation still to start already serves this wake.
	Coalesced
)

func (r WakeResult) String() string {
	switch r {
	case Started:
		return "started"
	case Queued:
		return "queued"
	case Coalesced:
		return "coalesced"
	}
	return fmt.Sprintf("WakeResult(%d)", uint8(r))
}

// Lanes runs activations per key, one at a time per key, at most
// MaxConcurrent at once, with waiting keys served in arrival order.
type Lanes[K comparable] struct {
	// lanesState is what mu guards, apart; its fields are promoted, so
	// that l.mu is l.lanesState.mu. mu also guards mon and every lane's
	// fields.
	*lanesState[K]
	mon laneMonitor // the contract monitor's notes (monitored builds); mu guards it

	// Set by New, and never changed after.
	cfg        Config[K]
	pol        policy.Policy
	lim        lanestep.Limits  // cfg's bounds, as the step takes them
	values     *context.Context // New's ctx: activations see its values, not its cancellation; their contexts point here
	timed      bool             // hooks or metrics hear durations: the clock is read
	quietExit  bool             // Config.OnExit is nil: an end has no OnExit to call
	watchDepth bool             // Hooks.QueueDepth or Metrics hear the depth

	// activations counts the activation goroutines' runs, for Close to
	// wait for; their Adds are made with mu held (unlock).
	activations sync.WaitGroup
	closeOnce   sync.Once
}

// lanesState is what Lanes.mu guards, and the mutex itself: what every
// wake and every end of an activation reads and writes. It passes from
// core to core with the lock, a cache line at a time, and on a machine
// whose cores are far apart each line costs a few hundred nanoseconds,
// more than a step's work. So it is an allocation of its own, whose size
// is a multiple of 64 bytes and at most 512: the allocator puts such an
// object on a 64-byte boundary (a larger one begins with a header of
// the allocator's), and its fields fill three cache lines, of which a
// wake mostly reads and writes only the first (TestStateFillsCacheLines).
// On two cores this cut a processed item's time at 1,000 keys by about
// a tenth (bench/).
type lanesState[K comparable] struct {
	// The first line, what every step reads: the lock, the counts, the
	// queue.
	mu       sync.Mutex
	running  int // activations running
	reserved int // queue places held by owed follow-ups
	// recent is the lane of the key woken or started last, while it is
	// its key's entry in lanes (Forget clears it): a burst of wakes of one
	// key, or an activation waking its own key, finds it without a lookup
	// in the map.
	recent *lane[K]
	queue  waitQueue[K] // waiting lanes, longest-waiting first
	// pendingSet says that pending holds something, so that a step that
	// left nothing there, as most wakes, does not read its line.
	pendingSet bool

	// The second line, what a step that starts an activation writes.
	pending stepEffects[K] // what the step under way asks for; see stepLocked
	// spare is a context made before the lock was taken, for the step
	// under way to start an activation with (finish); nil outside it.
	spare *activationContext
	_     [8]byte // to the line's end

	// The third line.
	// lanes holds the keys that are not idle; an idle key has no entry
	// (the policy's forget output deletes it), so memory does not grow
	// with the number of keys ever woken.
	lanes map[K]*lane[K]
	// free holds forgotten lanes for reuse, at most maxFreeLanes: a key
	// that goes idle and a key woken anew then cost no allocation. Their
	// keys are cleared (the zero K), so that the list keeps no key
	// reachable.
	free    []*lane[K]
	stopCtx func() bool // stops the ctx watch that closes the lanes
	closed  bool
	// runs holds the lanes whose activation holds a slot, oldest first,
	// for LongestRunning; kept only with Config.Metrics.
	runs runList[K]
}

// lane is one key's state; its fields change only with Lanes.mu held.
// A forgotten lane is reused for another key (Lanes.free), so nothing
// may keep a lane across a release of the lock and use it after its
// lane went idle, except through run.ctx, which names one activation
// only (activation.is). A lane of string keys is 64 bytes, one cache
// line of its own, which no other lane's step writes
// (TestStateFillsCacheLines).
type lane[K comparable] struct {
	key       K // the zero K while the lane waits in Lanes.free
	state     policy.StateID
	queued    bool       // the lane is in the wait queue
	reserved  bool       // the lane holds a queue place for an owed follow-up
	mapped    bool       // the lane is key's entry in Lanes.lanes
	returned  bool       // run's Activate has returned
	left      bool       // the contract monitor saw run's Activate return (monitored builds only)
	run       activation // the running activation, while run.held()
	prev      *lane[K]   // neighbours in the wait queue
	next      *lane[K]
	nextStart *lane[K]      // the next lane of an effects' start list
	ext       *laneExtra[K] // what some configurations need; nil until then
}

// maxFreeLanes bounds Lanes.free: a few suffice for the churn of keys
// going idle and woken anew, and more would keep the memory of a burst.
const maxFreeLanes = 64

// New starts lanes. Activations run with ctx's values; when ctx ends, the
// lanes close.
func New[K comparable](ctx context.Context, cfg Config[K]) (*Lanes[K], error) {
	quietExit := cfg.OnExit == nil
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	pol := cfg.Policy
	if pol == nil {
		pol = fsm.LanePolicy
	}
	// The activations' contexts point to a copy of ctx of its own, not
	// into l, so that one kept after its activation keeps l unreachable.
	values := new(context.Context)
	*values = ctx
	l := &Lanes[K]{lanesState: &lanesState[K]{lanes: map[K]*lane[K]{}}, cfg: cfg, pol: pol, values: values}
	l.lim = lanestep.Limits{MaxConcurrent: cfg.MaxConcurrent, MaxQueued: cfg.MaxQueued}
	l.timed = cfg.Metrics != nil || cfg.Hooks.Waited != nil || cfg.Hooks.Ended != nil
	l.quietExit = quietExit
	l.watchDepth = cfg.Metrics != nil || cfg.Hooks.QueueDepth != nil
	// Close runs at once if ctx is already done, and reads stopCtx.
	l.mu.Lock()
	l.stopCtx = context.AfterFunc(ctx, func() { l.Close() })
	l.mu.Unlock()
	return l, nil
}

// Wake asks for an activation of key and never waits for it. It returns
// ErrQueueFull when the wake needs a queue place and none is left, and
// ErrClosed after Close.
func (l *Lanes[K]) Wake(key K) (WakeResult, error) {
	var fx effects[K]
	defer fx.run(l)
	r, err := l.wake(key, &fx)
	if l.cfg.Metrics != nil {
		l.cfg.Metrics.Woke(r, err)
	}
	return r, err
}

// wake steps key's lane on Wake and answers it; fx gets what must happen
// once the lock is released.
func (l *Lanes[K]) wake(key K, fx *effects[K]) (WakeResult, error) {
	l.lock()
	defer l.unlock(fx)
	ln := l.laneLocked(key, fx)
	res, out := l.stepLocked(ln, policy.LaneWake, fx)
	if monitoring && res.Verdict == policy.Fired && bits.OnesCount64(uint64(out&wakeAnswers)) != 1 {
		l.broke(key, "Wake answered with "+laneFamily.FormatOutputs(out&wakeAnswers)+", not exactly one result")
	}
	// Bit tests, not Outputs.Has: the compiler does not inline Has in
	// this package's generic code, and every wake asks.
	switch {
	case res.Verdict == policy.Rejected:
		return 0, ErrClosed
	case out&policy.LaneOutputQueueFull != 0:
		return 0, ErrQueueFull
	case out&policy.LaneOutputStarted != 0:
		return Started, nil
	case out&policy.LaneOutputQueued != 0:
		return Queued, nil
	case out&policy.LaneOutputCoalesced != 0:
		return Coalesced, nil
	}
	panic(fmt.Sprintf("lanes: lane policy %s answered Wake in state %s with no wake result", l.pol.Name(), l.pol.Table().States[res.Next].Name))
}

// Cancel drops the wakes key owes and interrupts its running activation,
// then waits until the activation has returned and OnExit has run. If ctx
// ends first it returns context.Cause(ctx); the cancellation itself stands.
func (l *Lanes[K]) Cancel(ctx context.Context, key K) error {
	var fx effects[K]
	l.mu.Lock()
	var ended chan struct{}
	if ln, ok := l.lanes[key]; ok {
		l.stepLocked(ln, policy.LaneCancel, &fx)
		if ln.run.held() {
			ended = ln.endedLocked()
		}
	}
	l.unlock(&fx)
	fx.run(l)
	if ended == nil {
		return nil
	}
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Close refuses later wakes with ErrClosed, drops the queue, interrupts
// every running activation and waits for them to return. It is idempotent
// and safe to call from several goroutines; each call returns once every
// activation has ended, so an Activate or OnExit that calls it waits for
// itself for ever: stop the lanes from inside by cancelling New's ctx.
func (l *Lanes[K]) Close() error {
	l.closeOnce.Do(func() {
		var fx effects[K]
		l.mu.Lock()
		l.stopCtx()
		l.closed = true
		// Waiting lanes first, in queue order, so that their dropped
		// wakes are reported in the order they were made.
		lanes := make([]*lane[K], 0, len(l.lanes))
		for ln := l.queue.front(); ln != nil; ln = ln.next {
			lanes = append(lanes, ln)
		}
		for _, ln := range l.lanes {
			if !ln.queued {
				lanes = append(lanes, ln)
			}
		}
		for _, ln := range lanes {
			l.stepLocked(ln, policy.LaneClose, &fx)
		}
		l.unlock(&fx)
		fx.run(l)
	})
	l.activations.Wait()
	return nil
}

// laneLocked returns key's lane, creating it idle; after Close a new lane
// is closed before anything else reaches it.
func (l *Lanes[K]) laneLocked(key K, fx *effects[K]) *lane[K] {
	if ln := l.recent; ln != nil && ln.key == key {
		return ln
	}
	if ln, ok := l.lanes[key]; ok {
		l.recent = ln
		return ln
	}
	var ln *lane[K]
	if n := len(l.free); n > 0 {
		ln, l.free = l.free[n-1], l.free[:n-1]
	} else {
		ln = new(lane[K])
	}
	ln.key, ln.state, ln.mapped = key, l.pol.Initial(), true
	l.lanes[key] = ln
	l.recent = ln
	if l.closed {
		l.stepLocked(ln, policy.LaneClose, fx)
	}
	return ln
}
