package lanes

import "time"

// Hooks observe the lanes key by key: for logs, traces, or accounts kept
// per key. For metrics, use Metrics, which hears no keys and is called
// without the lanes' lock. Every field is optional. Hooks are called from
// the lanes' goroutines, some with the lanes' lock held: they must be
// fast and must not call back into the lanes.
type Hooks[K comparable] struct {
	// QueueDepth hears the depth after each step that changed it: the
	// queue places in use, which are the lanes waiting for a slot and
	// the follow-ups owed by running lanes, as MaxQueued counts them.
	QueueDepth func(n int)
	// Waited hears how long a lane waited in the queue for its slot.
	Waited func(key K, d time.Duration)
	// Ended hears how long an activation ran, and how it ended.
	Ended func(key K, d time.Duration, exit Exit)
	// TimedOut hears that an activation ran past TurnTimeout.
	TimedOut func(key K)
	// Panicked hears the value of a panic in an activation.
	Panicked func(key K, v any)
}

func (h *Hooks[K]) queueDepth(n int) {
	if h.QueueDepth != nil {
		h.QueueDepth(n)
	}
}

func (h *Hooks[K]) waited(key K, d time.Duration) {
	if h.Waited != nil {
		h.Waited(key, d)
	}
}

func (h *Hooks[K]) ended(key K, d time.Duration, exit Exit) {
	if h.Ended != nil {
		h.Ended(key, d, exit)
	}
	if f, ok := exit.(Failed); ok && h.Panicked != nil {
		if p, ok := f.Err.(*PanicError); ok {
			h.Panicked(key, p.Value)
		}
	}
}

func (h *Hooks[K]) timedOut(key K) {
	if h.TimedOut != nil {
		h.TimedOut(key)
	}
}
