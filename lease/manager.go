package lease

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/policy"
)

// Config configures a Manager.
type Config struct {
	// TTL is how long observers wait for a silent holder before taking
	// over, and how long after the start of its last successful write a
	// holder declares itself lost. Required.
	TTL time.Duration
	// Heartbeat is how often a holder renews. Required; Heartbeat × 2 must
	// not exceed TTL − LossMargin.
	Heartbeat time.Duration
	// LossMargin makes a holder declare itself lost this long before its
	// TTL has passed since the start of its last successful write, while
	// observers still wait the whole TTL: work stopped on Lost() has that
	// long to end before any successor can take over (collab lease run's
	// --grace). Zero by default; it must be less than TTL.
	LossMargin time.Duration
	// Repository stores the records: a repository of lease/sqlite,
	// lease/file or lease/postgres, a MemoryRepository, or any
	// store.Repository. Required.
	Repository store.Repository
	// Platform gives the process identity and the clock; nil means the
	// operating system's, platform.OS(). The manager needs no SQLite.
	Platform *platform.Platform
	// Policy is the lease policy; nil means fsm.LeasePolicy. It must be
	// of the "lease" family.
	Policy policy.Policy
	// Logger receives every lease event (losses and failed renewals as
	// warnings); nil discards them.
	Logger *slog.Logger
	// OnEvent, if set, hears every lease event, in order, outside the
	// manager's lock: it may be slow (no deadline waits for it) and may
	// call the manager. It runs in the goroutine whose step caused the
	// event, or in one already reporting earlier events: an event may be
	// reported after the call that caused it has returned, while another
	// goroutine's OnEvent runs.
	OnEvent func(Event)
	// Metrics, if set, receives the manager's metrics; nil means none,
	// and costs nothing.
	Metrics Metrics
}

// Validate reports the first invalid field as a *ConfigError, without any
// I/O; NewManager calls it first.
func (c Config) Validate() error {
	switch {
	case c.TTL <= 0:
		return &ConfigError{"TTL", fmt.Sprintf("is %v; want more than 0", c.TTL)}
	case c.Heartbeat <= 0:
		return &ConfigError{"Heartbeat", fmt.Sprintf("is %v; want more than 0", c.Heartbeat)}
	case c.LossMargin < 0 || c.LossMargin >= c.TTL:
		return &ConfigError{"LossMargin", fmt.Sprintf("is %v; want at least 0 and less than TTL (%v)", c.LossMargin, c.TTL)}
	case c.Heartbeat > (c.TTL-c.LossMargin)/2: // Heartbeat × 2 > TTL − LossMargin, without overflow
		return &ConfigError{"Heartbeat", fmt.Sprintf("is %v; Heartbeat × 2 must not exceed TTL − LossMargin (%v)", c.Heartbeat, c.TTL-c.LossMargin)}
	case c.Repository == nil:
		return &ConfigError{"Repository", "is nil"}
	case c.Policy != nil && c.Policy.Family() != "lease":
		return &ConfigError{"Policy", fmt.Sprintf("%s is of family %q, want \"lease\"", c.Policy.Name(), c.Policy.Family())}
	}
	return nil
}

// Manager acquires leases and renews the ones it holds together: one
// repository transaction per heartbeat tick where the repository is a
// store.BatchSaver.
type Manager struct {
	cfg   Config
	pol   policy.Policy
	p     *platform.Platform
	clock platform.Clock
	log   *slog.Logger

	mu   sync.Mutex
	cond *sync.Cond // broadcast when a handle's repository call ends
	// live holds every handle that has not ended; renewals are those
	// of them with a renewal scheduled.
	live    map[*Lease]struct{}
	seen    map[string]sighting // the observer's first sightings, by key
	mon     managerMonitor      // the contract monitor's notes (monitored builds)
	closing bool
	// outbox holds the events queued under the lock and not yet
	// reported; reporting says a goroutine is reporting them.
	outbox    []Event
	reporting bool
	// acquiring counts Acquire calls under way, so that Close releases
	// the leases they return too.
	acquiring sync.WaitGroup

	// The timer loop's heaps (timers.go), and whether the saver has a
	// batch.
	deadlines, renewals timerHeap
	saving              bool
	planning            bool // the loop has read the clock and not yet made its timer
	// kicks counts the loop's kicks; kicksPlanned is the count when the
	// loop last began to plan: a kick after it is not planned for yet.
	kicks, kicksPlanned uint64
	// wakeAt is when the loop's timer fires, if wakeArmed.
	wakeAt    time.Duration
	wakeArmed bool
	// sleepers are the waits of AcquireWait calls; trying counts those
	// calls that are not waiting (they are making an attempt).
	sleepers []*sleeper
	trying   int
	// changed, once a waiter asks for it (tests), is closed at the next
	// change of what they wait for.
	changed chan struct{}

	kick       chan struct{} // wakes the timer loop to plan again
	batches    chan saveJob  // the loop's batches for the saver
	reports    chan struct{} // wakes the reporter
	stop       chan struct{}
	loopDone   chan struct{}
	saverDone  chan struct{}
	reportDone chan struct{}
	closeOnce  sync.Once
}

// sighting is when this manager first saw a key's record revision, on
// its own monotonic clock: the start of the TTL it grants a silent holder.
type sighting struct {
	rev store.Revision
	at  time.Duration
}

// NewManager validates cfg, before any I/O, and starts the manager's
// heartbeat loop. Close stops it.
func NewManager(cfg Config) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, pol: cfg.Policy, p: cfg.Platform, log: cfg.Logger,
		live: map[*Lease]struct{}{}, seen: map[string]sighting{},
		kick: make(chan struct{}, 1), batches: make(chan saveJob, 1), reports: make(chan struct{}, 1),
		stop: make(chan struct{}), loopDone: make(chan struct{}), saverDone: make(chan struct{}), reportDone: make(chan struct{}),
		deadlines: timerHeap{kind: deadlineTimer}, renewals: timerHeap{kind: renewalTimer},
		planning: true} // until the loop's first plan
	if m.pol == nil {
		m.pol = fsm.LeasePolicy
	}
	if m.p == nil {
		m.p = platform.OS()
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	m.clock = m.p.GetClock()
	m.cond = sync.NewCond(&m.mu)
	go m.run()
	go m.saver()
	go m.reporter()
	return m, nil
}

// Close releases every lease the manager holds, all at once, so that a
// store that does not answer holds it about one TTL however many leases
// it holds, and stops its heartbeat;
// an Acquire that begins after Close has begun returns ErrClosed. Close
// first waits for the acquisitions already under way, each bounded only
// by its caller's ctx (a repository that does not answer holds Close as
// long), so that none ends holding a lease that Close missed. It returns
// the first release error. It is idempotent.
func (m *Manager) Close() error {
	var err error
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.closing = true
		m.mu.Unlock()
		m.acquiring.Wait()
		m.mu.Lock()
		handles := make([]*Lease, 0, len(m.live))
		for h := range m.live {
			handles = append(handles, h)
		}
		m.mu.Unlock()
		// All at once: each release is bounded by a TTL, so that the
		// whole is, too, however many leases a silent store holds.
		errs := make([]error, len(handles))
		var wg sync.WaitGroup
		for i, h := range handles {
			wg.Go(func() { errs[i] = h.Close() })
		}
		wg.Wait()
		for _, cerr := range errs {
			if cerr != nil {
				err = cerr
				break
			}
		}
		close(m.stop)
		<-m.loopDone
		close(m.batches)
		<-m.saverDone
		close(m.reports)
		<-m.reportDone
	})
	return err
}

// withTimeout returns a context that ends d from now on the manager's
// clock, the one its deadlines are counted on, with the cause
// context.DeadlineExceeded: the timer loop ends it, as it fires every
// timer of the manager.
func (m *Manager) withTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.Background())
	s := &sleeper{expire: func() { cancel(context.DeadlineExceeded) }}
	m.mu.Lock()
	s.at = m.now() + d
	m.sleepers = append(m.sleepers, s)
	m.kickLoop()
	m.mu.Unlock()
	return ctx, func() {
		m.mu.Lock()
		m.sleepers = slices.DeleteFunc(m.sleepers, func(o *sleeper) bool { return o == s })
		m.kickLoop() // so that no timer of the loop waits for it
		m.mu.Unlock()
		cancel(context.Canceled)
	}
}

// now reads the manager's monotonic clock.
func (m *Manager) now() time.Duration { return m.clock.Monotonic() }

// lifetime is how long after the start of its last successful write a
// holder of this manager declares itself lost: the TTL less the margin.
func (m *Manager) lifetime() time.Duration { return m.cfg.TTL - m.cfg.LossMargin }

// retryDelay is the wait before retrying a failed renewal: short enough
// for several tries before the deadline.
func (m *Manager) retryDelay() time.Duration { return max(m.cfg.Heartbeat/4, time.Millisecond) }
