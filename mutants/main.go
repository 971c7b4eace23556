// Command mutants measures which verification layer catches a planted bug.
// It plants each mutant of mutants/*.patch, one at a time, in a scratch
// copy of the repository (never the working tree), and runs the layers on
// it: the model checker (`collab check`), the contract monitors (the tests
// of the -monitor packages, built with them on), short seeded torture
// campaigns (`collab demo` on
// SQLite and on the file store), for a mutant of the history checker its
// guards and negative controls (the tests of linearizability/), and the
// unit tests of the packages the mutant touches and of those that import
// them, with -race. It prints a table of mutant → layers that caught it,
// writes it to mutants/REPORT.md, and exits 0 only when the model checker,
// a monitor, a campaign or the checker's controls caught every mutant it
// ran.
//
//	go run ./mutants [-only NAME,...] [-layers check,monitor,campaign,controls,unit] [-duration 20s] [-seeds 1,2]
//
// A mutant is NAME.patch: a one-line description, then a diff that git
// apply takes. A patch that no longer applies is reported stale and fails
// the run. A patch that changes spec/ has fsm/ regenerated after it is
// applied. A mutant that touches lease/postgres needs a server
// (COLLAB_TEST_POSTGRES_URL): without one its unit tests and campaign
// report "needs PostgreSQL", and the run does not count it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// config is what a run does, from the flags.
type config struct {
	root     string // the repository: where mutants/ and the files copied are
	only     []string
	layers   map[layer]bool
	duration time.Duration // of each campaign run
	seeds    []int64       // one campaign run per seed and store
	stores   []string      // the campaign's stores
	monitor  []string      // the packages whose tests run with the contract monitors on
	baseline bool          // run the layers on the unmutated copy first
	first    bool          // stop a mutant's layers at the first catch
	report   string        // where the report goes; "" is nowhere
	pgURL    string        // COLLAB_TEST_POSTGRES_URL
	limits   map[layer]time.Duration
	out      io.Writer
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stdout, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "mutants: %v\n", err)
		return 2
	}
	all, err := loadMutants(filepath.Join(cfg.root, "mutants"))
	if err != nil {
		fmt.Fprintf(stderr, "mutants: %v\n", err)
		return 2
	}
	selected, err := selectMutants(all, cfg.only)
	if err != nil {
		fmt.Fprintf(stderr, "mutants: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := runAll(ctx, cfg, selected)
	if err != nil {
		fmt.Fprintf(stderr, "mutants: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout)
	fmt.Fprint(stdout, rep.table())
	fmt.Fprintln(stdout)
	fmt.Fprint(stdout, rep.summary())
	if cfg.report != "" {
		if err := os.WriteFile(cfg.report, []byte(rep.markdown()), 0o644); err != nil {
			fmt.Fprintf(stderr, "mutants: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "report: %s\n", relTo(cfg.root, cfg.report))
	}
	if !rep.ok() {
		return 1
	}
	return 0
}

func parseFlags(args []string, stdout, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	only := fs.String("only", "", "run only these mutants: names, comma-separated (default: all of mutants/*.patch)")
	layers := fs.String("layers", "check,monitor,campaign,controls,unit", "the layers to run, comma-separated")
	duration := fs.Duration("duration", 20*time.Second, "how long each campaign run makes faults")
	seeds := fs.String("seeds", "1,2", "the campaign's seeds: one run per seed and store")
	stores := fs.String("stores", "sqlite,file", "the campaign's stores (a mutant of lease/postgres runs on postgres instead)")
	monitorPkgs := fs.String("monitor", "", "the packages whose tests run with the contract monitors on (build tag collabmonitor), space-separated: a monitor's report in a failing run is a catch, another failure is reported as what it was (default: none, n/a)")
	baseline := fs.Bool("baseline", true, "run the layers on the unmutated copy first: a layer that fails there makes its catches meaningless")
	report := fs.String("report", "mutants/REPORT.md", "where to write the report, relative to the repository (\"\": nowhere)")
	checkLimit := fs.Duration("check-timeout", 10*time.Minute, "time bound of the model checker")
	unitLimit := fs.Duration("test-timeout", 20*time.Minute, "go test -timeout of the unit tests, run with -race (a hanging mutant fails there; the world models alone take minutes under -race on a loaded machine)")
	monitorLimit := fs.Duration("monitor-timeout", 5*time.Minute, "go test -timeout of the monitored tests (a hang is reported there, with its stack)")
	first := fs.Bool("first", false, "stop a mutant's layers at the first that catches it (the baseline runs them all)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	cfg := &config{root: root, only: splitList(*only), layers: map[layer]bool{}, duration: *duration,
		stores: splitList(*stores), monitor: strings.Fields(*monitorPkgs), baseline: *baseline, first: *first, pgURL: os.Getenv("COLLAB_TEST_POSTGRES_URL"),
		limits: map[layer]time.Duration{check: *checkLimit, unit: *unitLimit, monitor: *monitorLimit}, out: stdout}
	for _, name := range splitList(*layers) {
		l, ok := layerNamed(name)
		if !ok {
			return nil, fmt.Errorf("-layers: unknown layer %q (want check, monitor, campaign, controls, unit)", name)
		}
		cfg.layers[l] = true
	}
	for _, s := range splitList(*seeds) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("-seeds: %q is not a non-zero integer", s)
		}
		cfg.seeds = append(cfg.seeds, n)
	}
	switch {
	case *duration <= 0:
		return nil, errors.New("-duration must be positive")
	case cfg.layers[campaign] && (len(cfg.seeds) == 0 || len(cfg.stores) == 0):
		return nil, errors.New("the campaign needs at least one seed and one store")
	}
	switch {
	case *report == "":
	case filepath.IsAbs(*report):
		cfg.report = *report
	default:
		cfg.report = filepath.Join(root, *report)
	}
	return cfg, nil
}

// repoRoot is the top of the working tree the command runs in.
func repoRoot() (string, error) {
	out, err := output("git", "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("not in a git working tree: %w", err)
	}
	return strings.TrimSpace(out), nil
}

func splitList(s string) []string {
	var list []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			list = append(list, f)
		}
	}
	return list
}

// selectMutants returns the mutants named in only (all when empty), in
// the order of all; a name that no patch has is an error.
func selectMutants(all []mutant, only []string) ([]mutant, error) {
	if len(only) == 0 {
		return all, nil
	}
	var names []string
	for _, m := range all {
		names = append(names, m.name)
	}
	for _, n := range only {
		if !slices.Contains(names, strings.TrimSuffix(n, ".patch")) {
			return nil, fmt.Errorf("no mutant %q; the mutants are: %s", n, strings.Join(names, ", "))
		}
	}
	var sel []mutant
	for _, m := range all {
		if slices.Contains(only, m.name) || slices.Contains(only, m.name+".patch") {
			sel = append(sel, m)
		}
	}
	return sel, nil
}

// runAll makes the scratch copy, runs the baseline and every mutant in
// it, and removes it.
func runAll(ctx context.Context, cfg *config, mutants []mutant) (*report, error) {
	start := time.Now()
	rep := &report{cfg: cfg, started: start, commit: describeCommit(cfg.root)}
	fmt.Fprintf(cfg.out, "mutants: %d mutant(s); layers %s; campaign %v × seeds %s × stores %s\n",
		len(mutants), cfg.layerList(), cfg.duration, joinInts(cfg.seeds), strings.Join(cfg.stores, ","))
	s, err := newScratch(ctx, cfg.root)
	if err != nil {
		return nil, err
	}
	defer s.remove()
	// A campaign that a planted bug fails under go test keeps its
	// evidence in the scratch directory, which goes with the run, not in
	// the system's temporary directory (torture.EnvKeepDir).
	if err := os.Setenv("COLLAB_KEEP_DIR", filepath.Join(s.dir, "kept")); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.out, "scratch copy made in %v\n", time.Since(start).Round(time.Second))
	if cfg.baseline {
		var pkgs []string
		for _, m := range mutants {
			if !m.needsPostgres() || cfg.pgURL != "" {
				pkgs = append(pkgs, m.packages()...)
			}
		}
		slices.Sort(pkgs)
		base := mutant{name: "(baseline)", desc: "the unmutated copy: every layer must pass", tests: slices.Compact(pkgs)}
		fmt.Fprintf(cfg.out, "\n%s: %s\n", base.name, base.desc)
		r := runMutant(ctx, cfg, s, base, false)
		rep.baseline = &r
	}
	for i, m := range mutants {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		fmt.Fprintf(cfg.out, "\n[%d/%d] %s: %s\n", i+1, len(mutants), m.name, m.desc)
		rep.results = append(rep.results, runMutant(ctx, cfg, s, m, true))
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	rep.took = time.Since(start)
	return rep, nil
}

func (c *config) layerList() string {
	var names []string
	for _, l := range allLayers {
		if c.layers[l] {
			names = append(names, l.String())
		}
	}
	return strings.Join(names, ", ")
}

func joinInts(ns []int64) string {
	var s []string
	for _, n := range ns {
		s = append(s, strconv.FormatInt(n, 10))
	}
	return strings.Join(s, ",")
}

// describeCommit names the commit the copy starts from, and whether the
// working tree differs from it.
func describeCommit(root string) string {
	head, err := output("git", "-C", root, "rev-parse", "--short", "HEAD")
	if err != nil {
		return "unknown"
	}
	desc := strings.TrimSpace(head)
	if st, err := output("git", "-C", root, "status", "--porcelain", "--untracked-files=no"); err == nil && strings.TrimSpace(st) != "" {
		desc += " with uncommitted changes"
	}
	return desc
}

func relTo(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}
