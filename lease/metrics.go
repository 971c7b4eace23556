package lease

import (
	"errors"
	"time"
)

// Metrics receives a Manager's metrics, as the metrics of client-go
// workqueue's MetricsProvider do: each method feeds one metric of the
// library of your choice (a Prometheus gauge's Add, a counter's Inc, a
// histogram's Observe). It hears no keys, so that no metric grows with
// the keys ever leased: OnEvent hears them.
//
// The manager calls its methods outside its lock, where it reports
// events (see Config.OnEvent), and from RunFenced's goroutine for fence
// waits, concurrently: they must be safe for that, and should be quick,
// since events wait for them.
type Metrics interface {
	// AddHeld adds delta to the leases the manager holds.
	AddHeld(delta int)
	// Acquired counts an acquisition: of a free key, or a takeover
	// from a holder proven dead (dead) or silent for the TTL.
	Acquired(takeover, dead bool)
	// Renewed observes a renewal written, with how long its write took.
	Renewed(took time.Duration)
	// RenewalFailed counts a failed renewal (retried until the deadline).
	RenewalFailed()
	// Lost counts a loss by its cause.
	Lost(cause LossCause)
	// FenceWaited observes how long a RunFenced call waited for the
	// repository's fence, taken or not.
	FenceWaited(d time.Duration)
}

// measure feeds event e to the metrics: one call per event, of the
// events' order.
func (m *Manager) measure(e Event) {
	mt := m.cfg.Metrics
	switch e.Kind {
	case Acquired:
		mt.AddHeld(1)
		if !e.takeover {
			mt.Acquired(false, false)
		}
	case TakenOver:
		mt.Acquired(true, e.PreviousDead)
	case Renewed:
		mt.Renewed(e.took)
	case RenewalFailed:
		mt.RenewalFailed()
	case Lost:
		mt.AddHeld(-1)
		cause := LostPolicy
		if loss, ok := errors.AsType[*LossError](e.Err); ok {
			cause = loss.Cause
		}
		mt.Lost(cause)
	case Released:
		mt.AddHeld(-1)
	}
}
