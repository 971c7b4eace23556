package lanes

import (
	"context"
	"fmt"
	"time"

	"github.com/rivus/collab/platform/clock"
	"github.com/rivus/collab/policy"
)

// NoQueue as Config.MaxQueued refuses every wake that cannot start at once.
const NoQueue = -1

// Config configures New. Activate is required; the zero value of every
// other field takes the default its comment gives.
type Config[K comparable] struct {
	// MaxConcurrent is how many activations run at once across all keys.
	// Default 1.
	MaxConcurrent int
	// MaxQueued is how many lanes may wait for a slot, counting the
	// follow-ups owed by running lanes. 0 means unbounded (each key waits
	// at most once); NoQueue refuses any wake that cannot start at once.
	MaxQueued int
	// TurnTimeout interrupts an activation that runs longer; 0 means none.
	TurnTimeout time.Duration
	// Activate is the work for one key. Its ctx carries the values of the
	// ctx given to New, and is cancelled when the lanes interrupt it
	// (Cancel, Close, TurnTimeout); context.Cause tells which.
	Activate func(ctx context.Context, key K) error
	// OnExit, if set, hears how each activation ended, or that an owed
	// activation was dropped before it started. It runs before the slot
	// passes on; it must not call Cancel or Close of these lanes.
	OnExit func(key K, exit Exit)
	// Policy is the lane policy; nil means fsm.LanePolicy. It must be of
	// the "lane" family.
	Policy policy.Policy
	// Logger receives warnings (a panic in OnExit), with slog's
	// alternating keys and values; a *slog.Logger fits, and nil discards
	// them. It is an interface, not *slog.Logger, so that a program that
	// uses lanes links no log/slog unless it logs.
	Logger Logger
	// Clock times TurnTimeout and the durations Hooks and Metrics hear;
	// nil means the real clock.
	Clock clock.Clock
	// Hooks observe each key's waits, activations, timeouts and panics,
	// and the queue depth.
	Hooks Hooks[K]
	// Metrics, if set, receives the lanes' metrics; nil means none, and
	// costs nothing.
	Metrics Metrics
}

// ConfigError reports an invalid Config field.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("lanes: invalid config: %s %s", e.Field, e.Reason)
}

// withDefaults validates c and fills in its defaults.
func (c Config[K]) withDefaults() (Config[K], error) {
	switch {
	case c.MaxConcurrent < 0:
		return c, &ConfigError{"MaxConcurrent", fmt.Sprintf("is %d; want at least 1 (0 means 1)", c.MaxConcurrent)}
	case c.MaxQueued < NoQueue:
		return c, &ConfigError{"MaxQueued", fmt.Sprintf("is %d; want 0 (unbounded), NoQueue, or a positive cap", c.MaxQueued)}
	case c.TurnTimeout < 0:
		return c, &ConfigError{"TurnTimeout", fmt.Sprintf("is %v; want 0 (none) or more", c.TurnTimeout)}
	case c.Activate == nil:
		return c, &ConfigError{"Activate", "is nil"}
	case c.Policy != nil && c.Policy.Family() != "lane":
		return c, &ConfigError{"Policy", fmt.Sprintf("%s is of family %q, want \"lane\"", c.Policy.Name(), c.Policy.Family())}
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = 1
	}
	if c.Logger == nil {
		c.Logger = discard{}
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	if c.OnExit == nil {
		c.OnExit = func(K, Exit) {}
	}
	return c, nil
}

// Logger is what lanes logs warnings through: *slog.Logger's Warn.
type Logger interface {
	Warn(msg string, args ...any)
}

// discard is the Logger of a nil Config.Logger.
type discard struct{}

func (discard) Warn(string, ...any) {}
