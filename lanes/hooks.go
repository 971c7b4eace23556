package lanes

import "time"

// Hooks observe the lanes without a metrics dependency, as client-go's
// workqueue metrics do: feed them to the metrics library of your choice.
// Every field is optional. Hooks are called from the lanes' goroutines,
// some with the lanes' lock held: they must be fast and must not call
// back into the lanes.
type Hooks[K comparable] struct {
	// QueueDepth hears the number of waiting lanes whenever it changes.
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
