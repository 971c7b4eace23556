package torture

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The stores a campaign can run on.
const (
	StoreSQLite = "sqlite" // lease/sqlite, a SQLite resource, SQLite process locks
	StoreFile   = "file"   // lease/file, a JSON file a key, lock-file process locks
	// StorePostgres is lease/postgres at PostgresURL and a table of the
	// run's schema, with SQLite process locks.
	StorePostgres = "postgres"
)

// Config describes a campaign. Zero fields take the defaults that
// WithDefaults documents; Validate reports the first invalid field.
type Config struct {
	// Dir is the run directory: the lease store, the resource, the
	// process locks and every process's history live in it. Required;
	// Run creates it, or takes it empty, and refuses one that holds
	// anything (an earlier run's files).
	Dir string
	// KeepDir is where a failing campaign keeps its evidence, since Dir
	// is often a t.TempDir() that goes when its test ends: Run copies
	// Dir (and HTML, if it lies outside) into a new directory under
	// KeepDir, and names it in Result.Kept, in the summary and in its
	// error (see the package doc). "" means the directory that
	// $COLLAB_KEEP_DIR (EnvKeepDir) names, made if missing, or else
	// os.TempDir(). It must not lie inside Dir.
	KeepDir string
	// DirKept says that the caller keeps Dir after the campaign, as
	// collab demo does: a failing campaign's evidence stays there, and
	// Run copies nothing.
	DirKept bool
	// Store is StoreSQLite (default), StoreFile, StorePostgres, or the
	// name of a store of the caller's (Register).
	Store string
	// PostgresURL is the database of StorePostgres (required with it).
	PostgresURL string
	// PostgresSchema is the PostgreSQL schema that holds the run's
	// tables; "" means a new one named after the seed and the time, so
	// that runs never share tables. Run drops a schema it named once the
	// history checks linearizable, and keeps it otherwise, next to the run
	// directory, as evidence; a schema the caller names is the caller's.
	PostgresSchema string
	// Server makes faults of the store's server (StorePostgres).
	Server ServerConfig
	// Seed drives every random choice of the controller and the workers
	// (worker i of a run uses Seed and i), so a run can be replayed with
	// its seed; the timing of real processes still differs. 0 means 1.
	Seed int64
	// Workers is how many worker processes run at once (default 4).
	Workers int
	// PIDNamespaces is how many of every Workers worker processes
	// started run each in a pid namespace of its own (Linux, as root;
	// default 0): the others cannot judge their processes, nor they the
	// others', so that holders there are taken over after the TTL alone,
	// beside holders judged by process. It must leave one worker at least
	// in this process table.
	PIDNamespaces int
	// Keys is how many keys the workers share (default 3): few keys
	// make contention, takeovers and refused writes.
	Keys int
	// Duration is the least time the campaign runs (default 5s); it goes
	// on past it until the Min targets are met, never past Deadline.
	Duration time.Duration
	// Deadline bounds the whole campaign, the check included (default
	// Duration × 2 + CheckTimeout × 2 + 30s; at least Duration +
	// CheckTimeout × 2, since a check and its diagnosis take up to one
	// CheckTimeout each). Missing a Min target in time is an error.
	Deadline time.Duration
	// TTL and Heartbeat of every worker's lease manager (defaults 300ms
	// and 100ms): short, so that paused holders are taken over.
	TTL       time.Duration
	Heartbeat time.Duration
	// KillEvery and PauseEvery are the mean gaps between SIGKILLs and
	// between SIGSTOPs (defaults 150ms and 400ms); negative means never.
	KillEvery  time.Duration
	PauseEvery time.Duration
	// Pause is the least time a paused worker stays stopped (default
	// TTL); each pause lasts between Pause and Pause × 2.
	Pause time.Duration
	// MinOps, MinKills and MinPauses are targets the campaign must reach
	// (default 0: none).
	MinOps, MinKills, MinPauses int
	// MinWaits and MinTerms are how many waits for a lease
	// (AcquireWait) and leaders' terms the campaign must see (default 0):
	// which role a worker takes is drawn, so a short campaign on a slow
	// machine may otherwise end before it has reached those paths.
	MinWaits, MinTerms int
	// MinStaleWrites is, for negative controls, how many stale writes
	// (Stats.StaleWrites) the campaign must see: it then runs until the
	// broken policies have certainly made a violation, however slowly the
	// machine lets the workers meet. A safe campaign never reaches it.
	MinStaleWrites int
	// CheckTimeout bounds the linearizability check, and again its
	// diagnosis after a violation (default 30s).
	CheckTimeout time.Duration
	// HTML is where porcupine's visualisation goes (default
	// Dir/history.html): after a violation always, otherwise only with
	// WriteHTML.
	HTML      string
	WriteHTML bool
	// Policies are paths of lease specs (.fsm): worker process p
	// compiles Policies[p % len(Policies)] and passes it as
	// lease.Config.Policy. Empty means the shipped lease policy for all.
	// Validate loads each one: a spec that cannot be read, parsed or
	// validated, or that is not of the lease family, is a *ConfigError.
	// The negative controls pass mutated specs.
	Policies []string
	// Command is the program and arguments that start a worker; the
	// program must call WorkerMain first thing. Default: this executable,
	// without arguments.
	Command []string
	// Collab, if set, is the collab executable: workers then also run
	// commands under `collab lock` (see commandLockRound) and `collab
	// lease run --wait` (see leaseRunRound). Default: none.
	Collab string
	// CollabLock, if set with Collab, is the small collab executable
	// (cmd/collab), which takes the SQLite mode's lock through the
	// kernel, without SQLite: on the SQLite store, one `collab lock`
	// round in two runs it instead of Collab (collab-full, whose lock
	// goes through SQLite), so that holders of the two kinds meet.
	// Default: none.
	CollabLock string
	// Progress, if set, hears the live progress line about twice a
	// second.
	Progress func(Stats)
}

// Default values of Config.
const (
	DefaultWorkers      = 4
	DefaultKeys         = 3
	DefaultDuration     = 5 * time.Second
	DefaultTTL          = 300 * time.Millisecond
	DefaultHeartbeat    = 100 * time.Millisecond
	DefaultKillEvery    = 150 * time.Millisecond
	DefaultPauseEvery   = 400 * time.Millisecond
	DefaultCheckTimeout = 30 * time.Second
)

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	set := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.Store == "" {
		c.Store = StoreSQLite
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.Keys == 0 {
		c.Keys = DefaultKeys
	}
	set(&c.Duration, DefaultDuration)
	set(&c.CheckTimeout, DefaultCheckTimeout)
	set(&c.Deadline, c.Duration*2+c.CheckTimeout*2+30*time.Second)
	set(&c.TTL, DefaultTTL)
	set(&c.Heartbeat, DefaultHeartbeat)
	set(&c.KillEvery, DefaultKillEvery)
	set(&c.PauseEvery, DefaultPauseEvery)
	set(&c.Pause, c.TTL)
	c.Server = c.Server.withDefaults(c.TTL)
	if c.HTML == "" && c.Dir != "" {
		c.HTML = filepath.Join(c.Dir, "history.html")
	}
	return c
}

// Validate reports the first invalid field of c (after WithDefaults) as
// a *ConfigError.
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case c.Dir == "":
		return bad("Dir", "is empty")
	case !shipped(c.Store) && !isRegistered(c.Store):
		return bad("Store", "is %q; want %q, %q, %q or a store of Register", c.Store, StoreSQLite, StoreFile, StorePostgres)
	case c.Store == StorePostgres && c.PostgresURL == "":
		return bad("PostgresURL", "is empty with store %q", c.Store)
	case c.Workers < 2 || c.Workers > 64:
		return bad("Workers", "is %d; want 2 to 64", c.Workers)
	case c.PIDNamespaces < 0 || c.PIDNamespaces >= c.Workers:
		return bad("PIDNamespaces", "is %d with %d workers; want 0 to %d", c.PIDNamespaces, c.Workers, c.Workers-1)
	case c.PIDNamespaces > 0 && !pidNamespaces:
		return bad("PIDNamespaces", "is %d; pid namespaces are Linux's", c.PIDNamespaces)
	case c.PIDNamespaces > 0 && os.Geteuid() != 0:
		return bad("PIDNamespaces", "is %d; making a pid namespace needs root", c.PIDNamespaces)
	case c.CollabLock != "" && c.Collab == "":
		return bad("CollabLock", "is %q without Collab, whose rounds it shares", c.CollabLock)
	case c.Keys < 1 || c.Keys > 1000:
		return bad("Keys", "is %d; want 1 to 1000", c.Keys)
	case c.Duration <= 0:
		return bad("Duration", "is %v; want more than 0", c.Duration)
	case c.CheckTimeout <= 0:
		return bad("CheckTimeout", "is %v; want more than 0", c.CheckTimeout)
	case c.Deadline < c.Duration+2*c.CheckTimeout:
		return bad("Deadline", "is %v; want at least Duration + CheckTimeout × 2 (%v)", c.Deadline, c.Duration+2*c.CheckTimeout)
	case c.TTL <= 0 || c.Heartbeat <= 0 || c.Heartbeat > c.TTL/2:
		return bad("Heartbeat", "is %v with TTL %v; want both more than 0 and Heartbeat × 2 ≤ TTL", c.Heartbeat, c.TTL)
	case c.Pause < c.TTL:
		return bad("Pause", "is %v; want at least TTL (%v), or pauses cause no takeovers", c.Pause, c.TTL)
	case c.MinOps < 0 || c.MinKills < 0 || c.MinPauses < 0 || c.MinStaleWrites < 0 || c.MinWaits < 0 || c.MinTerms < 0:
		return bad("MinOps", "targets must not be negative")
	case c.Command != nil && len(c.Command) == 0:
		return bad("Command", "is empty; want nil (this executable) or a program")
	}
	if err := c.validatePolicies(); err != nil {
		return err
	}
	return c.Server.validate()
}

// validatePolicies loads every spec of Policies as the workers do
// (loadPolicy), so that a missing or invalid spec is reported here, with
// its own error (file:line:col for a spec that does not parse or
// validate), rather than by every worker in its log.
func (c Config) validatePolicies() error {
	for i, path := range c.Policies {
		if _, err := loadPolicy(path); err != nil {
			return &ConfigError{Field: "Policies", Reason: fmt.Sprintf("[%d]: %v", i, err), Err: err}
		}
	}
	return nil
}

// ConfigError reports an invalid campaign configuration.
type ConfigError struct {
	Field  string
	Reason string
	Err    error // the cause, if any: a spec's *gen.Error, a file's error
}

func (e *ConfigError) Error() string { return "torture: Config." + e.Field + " " + e.Reason }

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }
