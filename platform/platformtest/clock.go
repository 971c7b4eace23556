package platformtest

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/rivus/collab/platform"
)

// Epoch is where a new Clock's wall time starts.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Clock is a platform.Clock that moves only when Advance is called. It is
// safe for concurrent use.
type Clock struct {
	mu      sync.Mutex
	wall    time.Time
	mono    time.Duration
	timers  []*timer      // pending, in no particular order
	changed chan struct{} // closed and replaced whenever timers changes
	seq     uint64        // creation order, to fire simultaneous timers in order
}

var _ platform.Clock = (*Clock)(nil)

// NewClock returns a clock at Epoch whose monotonic reading is one hour,
// so that readings taken "before" it by subtraction stay positive.
func NewClock() *Clock {
	return &Clock{wall: Epoch, mono: time.Hour, changed: make(chan struct{})}
}

// Now returns the fake wall time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall
}

// Monotonic returns the fake monotonic reading.
func (c *Clock) Monotonic() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mono
}

// SetWall moves the wall clock alone, as an NTP step would; timers and
// the monotonic reading do not move.
func (c *Clock) SetWall(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = t
}

// Advance moves both clocks forward by d, firing every timer that falls
// due, in order of deadline, each at its own deadline, and returns how many
// it fired. (Pending cannot tell that: a timer's goroutine may arm the next
// timer before Pending is read.)
func (c *Clock) Advance(d time.Duration) (fired int) {
	if d < 0 {
		panic("platformtest: Advance with a negative duration")
	}
	c.mu.Lock()
	end := c.mono + d
	for {
		t := c.nextDueLocked(end)
		if t == nil {
			break
		}
		c.wall = c.wall.Add(t.deadline - c.mono)
		c.mono = t.deadline
		c.removeLocked(t)
		t.fire(c.wall)
		fired++
	}
	c.wall = c.wall.Add(end - c.mono)
	c.mono = end
	c.mu.Unlock()
	return fired
}

// Pending returns the number of timers waiting to fire.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// WaitForTimers blocks until at least n timers wait to fire, so a test can
// advance the clock knowing the code under test has armed its timers. It
// returns ctx.Err() if ctx ends first.
func (c *Clock) WaitForTimers(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		pending, changed := len(c.timers), c.changed
		c.mu.Unlock()
		if pending >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// NewTimer returns a timer that fires once the clock has advanced by d.
func (c *Clock) NewTimer(d time.Duration) platform.Timer {
	t := &timer{clock: c, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// AfterFunc returns a timer that calls f in its own goroutine once the
// clock has advanced by d.
func (c *Clock) AfterFunc(d time.Duration, f func()) platform.Timer {
	t := &timer{clock: c, fn: f}
	t.Reset(d)
	return t
}

func (c *Clock) nextDueLocked(end time.Duration) *timer {
	sort.Slice(c.timers, func(i, j int) bool {
		a, b := c.timers[i], c.timers[j]
		return a.deadline < b.deadline || a.deadline == b.deadline && a.seq < b.seq
	})
	if len(c.timers) == 0 || c.timers[0].deadline > end {
		return nil
	}
	return c.timers[0]
}

func (c *Clock) addLocked(t *timer) {
	c.seq++
	t.seq = c.seq
	c.timers = append(c.timers, t)
	c.notifyLocked()
}

// removeLocked removes t and reports whether it was pending.
func (c *Clock) removeLocked(t *timer) bool {
	for i, p := range c.timers {
		if p == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			c.notifyLocked()
			return true
		}
	}
	return false
}

func (c *Clock) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

type timer struct {
	clock    *Clock
	ch       chan time.Time // nil for AfterFunc timers
	fn       func()
	deadline time.Duration
	seq      uint64
}

func (t *timer) C() <-chan time.Time { return t.ch }

// Stop and Reset drain a tick not yet received, as time.Timer does since
// Go 1.23, so no stale tick arrives after them.
func (t *timer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	t.drain()
	return t.clock.removeLocked(t)
}

func (t *timer) Reset(d time.Duration) bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	active := c.removeLocked(t)
	t.drain()
	if d <= 0 {
		t.fire(c.wall)
		return active
	}
	t.deadline = c.mono + d
	c.addLocked(t)
	return active
}

func (t *timer) drain() {
	if t.ch == nil {
		return
	}
	select {
	case <-t.ch:
	default:
	}
}

// fire delivers the tick; called with the clock's mutex held, so it
// never blocks: the channel has room for one tick, as time.Timer's.
func (t *timer) fire(now time.Time) {
	if t.fn != nil {
		go t.fn()
		return
	}
	select {
	case t.ch <- now:
	default:
	}
}
