package torture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	lz "github.com/rivus/collab/linearizability"
	"github.com/rivus/collab/platform"
)

// Run runs a campaign: it starts cfg.Workers worker processes, makes
// faults at random until cfg.Duration has passed and the Min targets
// are met, stops the workers, merges every process's history and checks
// it. The error reports a campaign that could not be run or finished
// (an invalid Config is a *ConfigError, and so is a Dir that exists and
// is not empty, refused before anything is written; a worker that
// failed on its own is a *WorkerError, a missed target a *TargetError);
// a violation is a Result whose Failed is true. Every child is killed
// and reaped before Run returns, whatever happens. A campaign that fails
// after its workers started, unless ctx ended it, keeps its evidence
// where it outlives Dir (see the package doc), named in Result.Kept, or
// by the *KeptError that then holds the error (errors.As still finds a
// *WorkerError or a *TargetError in it).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dir, err := checkRunDir(cfg.Dir, true)
	if err != nil {
		return nil, err
	}
	cfg.Dir = dir
	// Made private, then judged again as made: a directory another user
	// made at that name meanwhile is theirs, and refused.
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, err
	}
	if _, err := checkRunDir(cfg.Dir, false); err != nil {
		return nil, err
	}
	for _, d := range []string{historyDir, eventsDir, logsDir, locksDir} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	caller := ctx
	ctx, cancel := context.WithTimeout(ctx, cfg.Deadline-2*cfg.CheckTimeout)
	defer cancel()
	ownSchema := cfg.Store == StorePostgres && cfg.PostgresSchema == ""
	if cfg.Store == StorePostgres {
		var err error
		if cfg, err = preparePostgres(ctx, cfg); err != nil {
			return nil, err
		}
	}
	c, err := newController(cfg)
	if err != nil {
		return nil, err
	}
	stats, runErr := c.run(ctx)
	if err := errors.Join(runErr, c.close()); err != nil {
		if caller.Err() != nil {
			return nil, err // the caller ended it: no finding to keep
		}
		return keepFailed(cfg, nil, err)
	}
	res, err := checkRun(cfg, stats)
	if err != nil || res.Failed() || !ownSchema {
		return res, err
	}
	if err := dropSchema(context.WithoutCancel(ctx), cfg.PostgresURL, cfg.PostgresSchema); err != nil {
		return res, err
	}
	res.SchemaDropped = true
	return res, nil
}

// checkRunDir returns the run directory with the directories above it
// resolved (platform.TrustedToCreate), for Run to use from then on, or
// refuses it, as a *ConfigError of Dir, before
// anything is written, unless it is missing (and missing is fine) or an
// empty directory of this user that nobody else may write in (others may
// read it, as they may a t.TempDir(); its names are what matters): the workers
// append to the history files and the controller truncates the logs, so
// an earlier run's files would be damaged and its history mixed with this
// one's, and another user who owns the directory, or may write in it or
// in a directory above it (platform.TrustedToCreate), could swap its names
// for links to this user's files. Run creates a missing directory, 0700. (Validate does not look at the directory: a
// caller may validate a Config before making its directory.)
func checkRunDir(dir string, missing bool) (string, error) {
	bad := func(err error, format string, args ...any) error {
		return &ConfigError{Field: "Dir", Reason: fmt.Sprintf("%q ", dir) + fmt.Sprintf(format, args...), Err: err}
	}
	resolved, err := platform.TrustedPath(platform.OSFS(), dir)
	if err == nil {
		_, err = platform.TrustedToCreate(platform.OSFS(), filepath.Dir(resolved))
	}
	if err != nil {
		return "", bad(err, "cannot be trusted: %v", err)
	}
	info, err := os.Lstat(resolved)
	switch {
	case missing && errors.Is(err, fs.ErrNotExist):
		return resolved, nil
	case err != nil:
		return "", bad(err, "cannot be read: %v", err)
	case info.Mode()&fs.ModeSymlink != 0:
		return "", bad(nil, "is a symbolic link; want a new directory, or an empty one of yours that only you can write in (0700)")
	case !info.IsDir():
		return "", bad(nil, "is not a directory; want a new or empty directory")
	case info.Mode().Perm()&0o022 != 0:
		return "", bad(nil, "may be written by other users (mode %04o); want a new directory, or an empty one of yours that only you can write in (0700)", info.Mode().Perm())
	}
	if uid, ok := platform.FileOwner(info); ok && uid != os.Geteuid() {
		return "", bad(nil, "belongs to uid %d; want a new directory, or an empty one of yours that only you can write in (0700)", uid)
	}
	f, err := os.Open(resolved)
	if err != nil {
		return "", bad(err, "cannot be read: %v", err)
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	switch {
	case errors.Is(err, io.EOF):
		return resolved, nil
	case err != nil:
		return "", bad(err, "cannot be read: %v", err)
	}
	return "", bad(nil, "is not empty (it holds %q); want a new or empty directory, so that no earlier run's files are overwritten or mixed with this run's", names[0])
}

// checkRun checks the finished run of cfg (check), and keeps the
// evidence of a failure (keepFailed).
func checkRun(cfg Config, stats Stats) (*Result, error) {
	res, err := check(cfg, stats)
	if err != nil || res.Failed() {
		return keepFailed(cfg, res, err)
	}
	return res, nil
}

// check merges the history files of the run and checks them.
func check(cfg Config, stats Stats) (*Result, error) {
	paths, err := filepath.Glob(filepath.Join(cfg.Dir, historyDir, "p*.jsonl"))
	if err != nil {
		return nil, err
	}
	var files []io.Reader
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		files = append(files, f)
	}
	h, err := lz.ReadHistory(files...)
	if err != nil {
		return nil, err
	}
	// SQLite and files are written inside the workers: an operation takes
	// effect before its return, or its worker's reap. A server, and a
	// registered store that may be one, can act later.
	h.Local = cfg.Store == StoreSQLite || cfg.Store == StoreFile
	j, err := checkJudgements(cfg.Dir, h)
	if err != nil {
		return nil, err
	}
	pauses, err := readPauses(cfg.Dir)
	if err != nil {
		return nil, err
	}
	stats.DeadTakeovers, stats.CrossTable = j.deadTakeovers, j.crossTable
	res := &Result{Config: cfg, Stats: stats, Counts: count(h), Unknown: unknownReasons(h, pauses), History: h,
		Report: lz.Check(h, cfg.CheckTimeout), EndedAlive: j.endedAlive}
	if res.Failed() || cfg.WriteHTML {
		if err := res.Report.WriteHTML(cfg.HTML); err != nil {
			return res, err
		}
		res.HTML = cfg.HTML
	}
	return res, nil
}

// WorkerError reports a worker that ended on its own during a campaign:
// a failure of the harness or of the code under test, not a fault it
// made. Its stderr is in Log.
type WorkerError struct {
	Process int
	Err     error
	Log     string
}

func (e *WorkerError) Error() string {
	return fmt.Sprintf("torture: worker p%d ended on its own: %v (its stderr: %s)", e.Process, e.Err, e.Log)
}

// Unwrap returns the exit error.
func (e *WorkerError) Unwrap() error { return e.Err }

// TargetError reports a campaign that reached its deadline before one
// of its Min targets.
type TargetError struct {
	Stats  Stats
	Config Config
}

func (e *TargetError) Error() string {
	s, c := e.Stats, e.Config
	return fmt.Sprintf("torture: deadline %v passed with %d/%d operations, %d/%d kills, %d/%d pauses, %d/%d stale writes, %d/%d waits, %d/%d leaders' terms, %d/%d server stops, %d/%d server pauses, %d/%d holders cut off by a stop",
		c.Deadline, s.Ops, c.MinOps, s.Kills, c.MinKills, s.Pauses, c.MinPauses, s.StaleWrites, c.MinStaleWrites, s.Waits, c.MinWaits, s.Terms, c.MinTerms,
		s.ServerStops, c.Server.MinStops, s.ServerPauses, c.Server.MinPauses, s.CutOff, c.Server.MinCutOff)
}

// met reports whether s reaches c's targets.
func met(s Stats, c Config) bool {
	return s.Elapsed >= c.Duration && s.Ops >= c.MinOps && s.Kills >= c.MinKills && s.Pauses >= c.MinPauses &&
		s.StaleWrites >= c.MinStaleWrites && s.Waits >= c.MinWaits && s.Terms >= c.MinTerms && s.ServerStops >= c.Server.MinStops && s.ServerPauses >= c.Server.MinPauses &&
		s.CutOff >= c.Server.MinCutOff
}
