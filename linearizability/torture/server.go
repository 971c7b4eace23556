package torture

import (
	"fmt"
	"time"
)

// ServerFaults makes faults of the server that holds the store (the
// PostgreSQL store's server): the controller stops it and starts it
// again, or pauses it and continues it, at random moments. Each method
// returns once its fault is made; Start once the server accepts
// connections again.
type ServerFaults interface {
	// Stop stops the server at once, without a checkpoint or goodbyes
	// to its clients (pg_ctl stop -m immediate): its sessions end, and
	// their advisory locks with them.
	Stop() error
	// Start starts the server again after Stop.
	Start() error
	// Pause stops the server's listening process (SIGSTOP of the
	// postmaster): sessions already open go on, new ones wait.
	Pause() error
	// Resume continues it after Pause.
	Resume() error
}

// ServerConfig describes the server faults of a campaign.
type ServerConfig struct {
	// Faults makes the faults; nil means none.
	Faults ServerFaults
	// Every is the mean gap between the end of one server fault and the
	// start of the next (default 1s); a stop and a pause are equally
	// likely.
	Every time.Duration
	// Outage is the least time a fault lasts (default TTL); each lasts
	// between Outage and Outage × 2, so that holders cannot renew and
	// declare their leases lost.
	Outage time.Duration
	// MinStops and MinPauses are targets the campaign must reach
	// (default 0: none).
	MinStops, MinPauses int
	// MinCutOff is how many holders cut off by a server stop
	// (Stats.CutOff) the campaign must see (default 0: none). Whether a
	// stop finds a holder depends on the timing of the workers, so a
	// campaign that must show one runs until it does, however slowly the
	// machine lets it.
	MinCutOff int
}

// DefaultServerEvery is the default of ServerConfig.Every.
const DefaultServerEvery = time.Second

func (s ServerConfig) withDefaults(ttl time.Duration) ServerConfig {
	if s.Every == 0 {
		s.Every = DefaultServerEvery
	}
	if s.Outage == 0 {
		s.Outage = ttl
	}
	return s
}

// validate reports the first invalid field of s as a *ConfigError.
func (s ServerConfig) validate() error {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Field: "Server." + field, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case s.Every <= 0:
		return bad("Every", "is %v; want more than 0", s.Every)
	case s.Outage <= 0:
		return bad("Outage", "is %v; want more than 0", s.Outage)
	case s.MinStops < 0 || s.MinPauses < 0 || s.MinCutOff < 0:
		return bad("MinStops", "targets must not be negative")
	case s.Faults == nil && (s.MinStops > 0 || s.MinPauses > 0 || s.MinCutOff > 0):
		return bad("Faults", "is nil with targets of server faults")
	}
	return nil
}

// The kinds of server fault, in Outage.Kind.
const (
	ServerStop  = "stop"
	ServerPause = "pause"
)

// Outage is one server fault: its kind and when it began and ended, on
// the host's monotonic clock like the history's times.
type Outage struct {
	Kind     string
	From, To time.Duration
}
