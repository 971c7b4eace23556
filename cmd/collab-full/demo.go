package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"time"

	"github.com/rivus/collab/internal/command"
	"github.com/rivus/collab/linearizability/torture"
)

// workerCommand starts a campaign's workers; nil is this executable,
// which recognises a worker by its environment (torture.WorkerMain).
var workerCommand []string

// collabCommand is the collab executable the workers run commands under
// (`collab lock`, `collab lease run`); "" is this executable.
var collabCommand string

// smallCollabBeside returns the small collab installed beside full, or "":
// the campaign's `collab lock` rounds then take the SQLite lock through
// the kernel half the time (torture.Config.CollabLock).
func smallCollabBeside(full string) string {
	name := "collab"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	small := filepath.Join(filepath.Dir(full), name)
	sst, err := os.Stat(small)
	if err != nil || !sst.Mode().IsRegular() {
		return ""
	}
	if fst, err := os.Stat(full); err != nil || os.SameFile(sst, fst) {
		return ""
	}
	return small
}

// runDemo is `collab demo`: a torture campaign of real worker processes
// on a store in a temporary directory, with a live progress line, then
// the summary, porcupine's verdict and the visualisation's path; then,
// in this process, a campaign of package lanes (--lanes long), checked
// against its promises. Exit 0 when the history is linearizable and the
// lanes kept their promises, 1 when not (or undecided), 2 on misuse.
func runDemo(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("collab demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := command.DurationFlag(fs, "duration", 25*time.Second, "how long the campaign makes faults")
	store := fs.String("store", torture.StoreSQLite, "the lease store: sqlite, file or postgres")
	pgURL := fs.String("postgres-url", "", "the PostgreSQL database of --store postgres (the run's tables go in a schema of their own)")
	seed := fs.Int64("seed", 0, "the seed of every random choice (0: from the clock); printed to replay a run")
	workers := fs.Int("workers", torture.DefaultWorkers, "worker processes running at once")
	pidNS := fs.Int("pid-namespaces", 0, "of every --workers processes, how many run each in a pid namespace of its own (Linux, as root), judged by the TTL alone")
	dir := fs.String("dir", "", "the run directory, new or empty (default: a new temporary directory, kept)")
	html := fs.String("html", "", "where to write porcupine's visualisation (default: DIR/history.html)")
	keys := fs.Int("keys", torture.DefaultKeys, "keys the workers share")
	pauseEvery := command.DurationFlag(fs, "pause-every", torture.DefaultPauseEvery, "mean gap between SIGSTOP pauses")
	minOps := fs.Int("min-ops", 0, "fail unless the campaign makes at least this many operations (it runs on past --duration to reach the targets)")
	minKills := fs.Int("min-kills", 0, "fail unless at least this many SIGKILLs")
	minPauses := fs.Int("min-pauses", 0, "fail unless at least this many SIGSTOP pauses of at least a TTL")
	lanesFor := command.DurationFlag(fs, "lanes", 5*time.Second, "after the processes, how long the in-process lanes campaign runs (0: none)")
	deadline := command.DurationFlag(fs, "deadline", 0, "bound the whole campaign, the check included, so that a slow machine still reaches the --min targets (0: twice --duration, twice the check timeout, and 30s)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "collab demo: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano()
	}
	cfg := torture.Config{Dir: *dir, Store: *store, PostgresURL: *pgURL, Seed: *seed, Workers: *workers, PIDNamespaces: *pidNS, Keys: *keys, Duration: *duration,
		PauseEvery: *pauseEvery, MinOps: *minOps, MinKills: *minKills, MinPauses: *minPauses, Deadline: *deadline,
		HTML: *html, WriteHTML: true, Command: workerCommand}
	check := cfg
	if check.Dir == "" {
		check.Dir = "." // stands for the temporary directory made later
	}
	if err := check.WithDefaults().Validate(); err != nil {
		fmt.Fprintf(stderr, "collab demo: %v\n", err)
		return 2
	}
	if *lanesFor < 0 {
		fmt.Fprintf(stderr, "collab demo: --lanes is %v; want 0 (none) or more\n", *lanesFor)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	code := demo(ctx, cfg, stdout, stderr)
	if *lanesFor > 0 && ctx.Err() == nil {
		code = max(code, demoLanes(ctx, torture.LanesConfig{Seed: *seed, Duration: *lanesFor}, stdout, stderr))
	}
	return code
}

// demoLanes runs the in-process lanes campaign of cfg and prints it.
func demoLanes(ctx context.Context, cfg torture.LanesConfig, stdout, stderr io.Writer) int {
	res, err := torture.RunLanes(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "collab demo: lanes campaign: %v (seed %d)\n", err, cfg.Seed)
		return 1
	}
	fmt.Fprintln(stdout)
	res.Print(stdout)
	if res.Failed() {
		return 1
	}
	return 0
}

// demo runs the campaign of cfg and prints it.
func demo(ctx context.Context, cfg torture.Config, stdout, stderr io.Writer) int {
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "collab-demo-")
		if err != nil {
			fmt.Fprintf(stderr, "collab demo: %v\n", err)
			return 1
		}
		cfg.Dir = d
	}
	if cfg.HTML == "" {
		cfg.HTML = filepath.Join(cfg.Dir, "history.html")
	}
	// The run directory outlives the demo, which prints it: a failing
	// campaign's evidence stays there rather than being copied.
	cfg.DirKept = true
	if cfg.Collab = collabCommand; cfg.Collab == "" {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintf(stderr, "collab demo: %v\n", err)
			return 1
		}
		cfg.Collab = exe
	}
	if cfg.CollabLock = smallCollabBeside(cfg.Collab); cfg.CollabLock != "" {
		fmt.Fprintf(stdout, "collab demo: `collab lock` also through %s, which takes SQLite's lock through the kernel\n", cfg.CollabLock)
	}
	fmt.Fprintf(stdout, "collab demo: %d worker processes on %s for %v, seed %d, in %s\n",
		cfg.WithDefaults().Workers, cfg.Store, cfg.Duration, cfg.Seed, cfg.Dir)
	cfg.Progress = func(s torture.Stats) { fmt.Fprintf(stdout, "\r%s", torture.ProgressLine(s)) }
	res, err := torture.Run(ctx, cfg)
	fmt.Fprintln(stdout)
	if err != nil {
		fmt.Fprintf(stderr, "collab demo: %v (seed %d, run directory %s)\n", err, cfg.Seed, cfg.Dir)
		return 1
	}
	res.Print(stdout)
	if res.Failed() {
		return 1
	}
	return 0
}
