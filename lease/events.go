package lease

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/rivus/collab/platform"
)

// EventKind names what happened to a lease.
type EventKind uint8

// The events a Manager reports.
const (
	// Acquired: this manager acquired the key.
	Acquired EventKind = iota + 1
	// TakenOver: the acquisition took the key over from a holder that was
	// dead or silent for the TTL; Event.Previous names it.
	TakenOver
	// Renewed: a renewal was written.
	Renewed
	// RenewalFailed: a renewal failed and will be retried; Event.Err says why.
	RenewalFailed
	// Lost: the holder declared the lease lost.
	Lost
	// Released: Close ended the lease.
	Released
)

var eventNames = [...]string{Acquired: "acquired", TakenOver: "taken over", Renewed: "renewed",
	RenewalFailed: "renewal failed", Lost: "lost", Released: "released"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one lease event, as Config.OnEvent hears it.
type Event struct {
	Kind  EventKind
	Key   string
	Token Token
	// Previous is the holder a TakenOver event took the key from.
	Previous *platform.Identity
	// PreviousDead: the TakenOver event's previous holder was dead on
	// proof; otherwise it was silent for the TTL.
	PreviousDead bool
	// Err is the failure of a RenewalFailed event, and the *LossError of
	// a Lost one.
	Err error

	takeover bool          // an Acquired event a TakenOver event follows
	took     time.Duration // how long a Renewed event's write took
}

// emitLocked queues e for reporting: the step that caused it runs with
// the manager's lock held, and the report runs user code.
func (m *Manager) emitLocked(e Event) { m.outbox = append(m.outbox, e) }

// unlockAndReport lets go of the manager's lock and reports the events
// queued under it, in order, outside the lock: a slow log handler or
// OnEvent delays no step of the manager, and OnEvent may call it. One
// goroutine reports at a time; one that finds another reporting leaves
// its events to it, so that the order holds and an OnEvent that calls
// the manager does not wait for itself.
func (m *Manager) unlockAndReport() {
	if m.reporting {
		m.mu.Unlock()
		return
	}
	m.reporting = true
	for len(m.outbox) > 0 {
		events := m.outbox
		m.outbox = nil
		m.mu.Unlock()
		for _, e := range events {
			m.report(e)
		}
		m.mu.Lock()
	}
	m.reporting = false
	m.changedLocked()
	m.mu.Unlock()
}

// unlockAndHandOff lets go of the manager's lock and leaves the events
// queued under it to the reporter: the timer loop runs no user code.
func (m *Manager) unlockAndHandOff() {
	pending := len(m.outbox) > 0 && !m.reporting
	m.mu.Unlock()
	if pending {
		select {
		case m.reports <- struct{}{}:
		default:
		}
	}
}

// reporter reports the events the timer loop queued, until Close.
func (m *Manager) reporter() {
	defer close(m.reportDone)
	for range m.reports {
		m.mu.Lock()
		m.unlockAndReport()
	}
	m.mu.Lock()
	m.unlockAndReport()
}

// report hands e to the log and the hook.
func (m *Manager) report(e Event) {
	level := slog.LevelDebug
	if e.Kind == Lost || e.Kind == RenewalFailed {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{slog.String("key", e.Key), slog.Uint64("token", uint64(e.Token))}
	if e.Previous != nil {
		attrs = append(attrs, slog.String("previous", e.Previous.String()), slog.Bool("previous_dead", e.PreviousDead))
	}
	if e.Err != nil {
		attrs = append(attrs, slog.String("err", e.Err.Error()))
	}
	m.log.LogAttrs(context.Background(), level, "lease "+e.Kind.String(), attrs...)
	if m.cfg.Metrics != nil {
		m.measure(e)
	}
	if m.cfg.OnEvent != nil {
		m.cfg.OnEvent(e)
	}
}
