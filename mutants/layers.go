package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
)

// layer is a verification layer.
type layer int

const (
	check layer = iota
	monitor
	campaign
	controls
	unit
)

// allLayers in the order they run and are reported.
var allLayers = []layer{check, monitor, campaign, controls, unit}

func (l layer) String() string {
	return [...]string{"model checker", "monitor", "campaign", "checker's controls", "unit tests"}[l]
}

// flagName is the layer's name in -layers.
func (l layer) flagName() string {
	return [...]string{"check", "monitor", "campaign", "controls", "unit"}[l]
}

// strong: a catch by this layer is what the run asks of every mutant.
func (l layer) strong() bool { return l != unit }

func layerNamed(name string) (layer, bool) {
	for _, l := range allLayers {
		if l.flagName() == name {
			return l, true
		}
	}
	return 0, false
}

// status is what a layer did with a mutant.
type status int

const (
	notRun        status = iota // the layer was not asked for
	missed                      // it ran and passed: the mutant went unnoticed
	caught                      // it failed: it caught the mutant
	notApplicable               // nothing to run (no monitors yet, no package touched)
	needsPG                     // it needs a PostgreSQL server and has none
	broken                      // it could not decide: timed out, or failed to run
)

func (s status) String() string {
	return [...]string{"not run", "missed", "caught", "n/a", "needs PostgreSQL", "did not finish"}[s]
}

// layerResult is one layer's verdict on one mutant.
type layerResult struct {
	status status
	detail string // what failed, or why it did not run
	took   time.Duration
}

// result is everything a run learnt about one mutant.
type result struct {
	m      mutant
	stale  string // git apply's complaint when the patch no longer applies
	setup  string // a failure to generate or build the mutated copy
	layers map[layer]layerResult
	took   time.Duration
}

// runMutant resets the copy, applies m (unless it is the baseline),
// builds it and runs the layers.
func runMutant(ctx context.Context, cfg *config, s *scratch, m mutant, apply bool) result {
	start := time.Now()
	r := result{m: m, layers: map[layer]layerResult{}}
	defer func() { r.took = time.Since(start) }()
	say := func(format string, args ...any) { fmt.Fprintf(cfg.out, "  "+format+"\n", args...) }
	if err := s.reset(ctx); err != nil {
		r.setup = err.Error()
		say("ERROR: %s", r.setup)
		return r
	}
	if apply {
		if err := s.apply(ctx, m.patch); err != nil {
			r.stale = firstLine(err.Error())
			say("STALE: the patch no longer applies: %s", r.stale)
			return r
		}
	}
	if m.changesSpec() {
		if res := runBounded(ctx, s.repo, nil, 5*time.Minute, goCommand(), "generate", "./fsm"); res.code != 0 {
			r.setup = "go generate ./fsm: " + failure(res)
			say("ERROR: %s", r.setup)
			return r
		}
	}
	// The campaign's workers run with the contract monitors on, as make
	// campaign's do: a broken duty ends a worker, which fails the run.
	// collab beside collab-full: the campaign runs both (make campaign).
	if res := runBounded(ctx, s.repo, nil, 15*time.Minute, goCommand(), "build", "-trimpath", "-tags", "collabmonitor", "-o", filepath.Dir(s.bin)+string(filepath.Separator), "./cmd/collab", "./cmd/collab-full"); res.code != 0 {
		r.setup = "go build -tags collabmonitor ./cmd/collab ./cmd/collab-full: " + failure(res)
		say("ERROR: %s", r.setup)
		return r
	}
	for _, l := range allLayers {
		if !cfg.layers[l] || ctx.Err() != nil {
			continue
		}
		var lr layerResult
		switch l {
		case check:
			lr = runCheck(ctx, cfg, s)
		case monitor:
			lr = runMonitor(ctx, cfg, s, m)
		case campaign:
			lr = runCampaign(ctx, cfg, s, m)
		case controls:
			lr = runControls(ctx, cfg, s, m)
		case unit:
			lr = runUnit(ctx, cfg, s, m)
		}
		r.layers[l] = lr
		say("%-14s %-16s %-7s %s", l, lr.status, roundTook(lr.took), lr.detail)
		if cfg.first && apply && lr.status == caught {
			break
		}
	}
	return r
}

// runCheck runs `collab check`: a non-zero exit is a catch.
func runCheck(ctx context.Context, cfg *config, s *scratch) layerResult {
	res := runBounded(ctx, s.repo, nil, cfg.limits[check], s.bin, "check")
	lr := layerResult{took: res.took}
	switch {
	case res.timedOut, res.startErr != nil:
		lr.status, lr.detail = broken, failure(res)
	case res.code != 0:
		lr.status, lr.detail = caught, checkFinding(res.stdout, res.stderr)
	default:
		lr.status = missed
	}
	return lr
}

// checkFinding is the first summary line of collab check that is not a
// pass, else its first error line.
func checkFinding(stdout, stderr string) string {
	for line := range strings.SplitSeq(stdout, "\n") {
		if strings.Contains(line, " world of ") && !strings.Contains(line, ": passed,") {
			return strings.TrimSpace(line)
		}
	}
	return firstLine(stderr)
}

// runMonitor runs the tests of the monitored packages that the mutant's
// change can reach with the contract monitors on.
func runMonitor(ctx context.Context, cfg *config, s *scratch, m mutant) layerResult {
	if len(cfg.monitor) == 0 {
		return layerResult{status: notApplicable, detail: "no monitored packages"}
	}
	pkgs := cfg.monitor
	if m.patch != "" { // the baseline runs them all
		var err error
		if pkgs, err = monitoredFor(ctx, s.repo, cfg.monitor, m.packages()); err != nil {
			return layerResult{status: broken, detail: err.Error()}
		}
		if len(pkgs) == 0 {
			return layerResult{status: notApplicable, detail: "no monitored package uses what it changes"}
		}
	}
	return monitorLayer(ctx, s.repo, pkgs, cfg.limits[monitor])
}

// demoRun is the verdict of one campaign run.
type demoRun struct {
	store  string
	seed   int64
	kind   string // linearizable, violation, worker crash, inconclusive, timed out, error
	detail string
	took   time.Duration
}

func (d demoRun) caught() bool {
	return d.kind == "violation" || d.kind == "worker crash" || d.kind == "campaign crash"
}

func (d demoRun) String() string {
	s := fmt.Sprintf("%s/%d %s", d.store, d.seed, d.kind)
	if d.detail != "" {
		s += " (" + d.detail + ")"
	}
	return s
}

// runCampaign runs `collab demo` once per seed on each store the mutant
// can affect (its own, for a mutant of one store's code): a violation or
// a worker that crashed is a catch; missing a --min-* target is not.
func runCampaign(ctx context.Context, cfg *config, s *scratch, m mutant) layerResult {
	stores := m.campaignStores(cfg.stores)
	if slices.Contains(stores, "postgres") && cfg.pgURL == "" {
		return layerResult{status: needsPG, detail: "COLLAB_TEST_POSTGRES_URL is unset"}
	}
	// torture's own deadline, Duration × 2 + CheckTimeout × 2 + 30s,
	// and a minute to spare.
	limit := 2*cfg.duration + 2*30*time.Second + 30*time.Second + time.Minute
	var runs []demoRun
	var took time.Duration
	for _, store := range stores {
		for _, seed := range cfg.seeds {
			if ctx.Err() != nil {
				break
			}
			dir := filepath.Join(s.runs, fmt.Sprintf("%s-%d", store, seed))
			args := []string{"demo", "--store", store, "--duration", cfg.duration.String(), "--seed", fmt.Sprint(seed),
				"--keys", "4", "--pause-every", "250ms", "--dir", dir, "--pid-namespaces", pidNamespaces()}
			if store == "postgres" {
				args = append(args, "--postgres-url", cfg.pgURL)
			}
			res := runBounded(ctx, s.repo, nil, limit, s.bin, args...)
			d := classifyDemo(res)
			if store == "postgres" {
				if err := dropKeptSchema(ctx, cfg.pgURL, res.stdout); err != nil {
					fmt.Fprintf(cfg.out, "  (could not drop the schema the run kept: %v)\n", err)
				}
			}
			d.store, d.seed, d.took = store, seed, res.took
			runs = append(runs, d)
			took += res.took
			_ = os.RemoveAll(dir)
		}
	}
	return campaignResult(runs, took)
}

// campaignResult sums up the runs: caught when one caught it, missed
// when none did and one at least was linearizable.
func campaignResult(runs []demoRun, took time.Duration) layerResult {
	lr := layerResult{took: took, status: broken}
	var notes []string
	n := 0
	for _, d := range runs {
		switch {
		case d.caught():
			n++
			lr.status = caught
			notes = append(notes, d.String())
		case d.kind == "linearizable":
			if lr.status == broken {
				lr.status = missed
			}
		default:
			notes = append(notes, d.String())
		}
	}
	lr.detail = fmt.Sprintf("%d/%d runs caught it", n, len(runs))
	if len(notes) > 0 {
		lr.detail += ": " + strings.Join(notes, "; ")
	}
	return lr
}

// workerCrash matches the error of a worker that ended on its own.
var workerCrash = regexp.MustCompile(`worker (p\d+) ended on its own: (.*?) \(its stderr: ([^)]*)\)`)

// classifyDemo reads a `collab demo` run's outcome from its output; a
// crashed worker's stderr, still in the run directory, names the crash.
func classifyDemo(res ran) demoRun {
	switch {
	case res.interrupted:
		return demoRun{kind: "interrupted"}
	case res.timedOut:
		return demoRun{kind: "timed out", detail: "after " + roundTook(res.took)}
	case strings.Contains(res.stdout, "porcupine: violation"):
		return demoRun{kind: "violation"}
	case strings.Contains(res.stdout, "ENDED ALIVE: "):
		return demoRun{kind: "violation", detail: clip(lineWith(res.stdout, "ENDED ALIVE: "), 200)}
	case strings.Contains(res.stdout, "VIOLATIONS of the promises of package lanes"):
		return demoRun{kind: "violation", detail: "lanes: " + clip(lineAfter(res.stdout, "VIOLATIONS of the promises of package lanes"), 200)}
	case strings.HasPrefix(res.stderr, "panic: ") || strings.Contains(res.stderr, "\npanic: "):
		// The campaign's own process: the lanes campaign runs in it.
		return demoRun{kind: "campaign crash", detail: clip(panicLine(res.stderr), 200)}
	case strings.Contains(res.stderr, "contract monitor: ") && !workerCrash.MatchString(res.stderr):
		// A monitor of the campaign's own process (the lanes campaign's).
		return demoRun{kind: "campaign crash", detail: clip(lineWith(res.stderr, "contract monitor: "), 200)}
	}
	if m := workerCrash.FindStringSubmatch(res.stderr); m != nil {
		detail := m[1] + ": " + m[2]
		if line := crashLine(m[3]); line != "" {
			detail += ": " + line
		}
		return demoRun{kind: "worker crash", detail: clip(detail, 200)}
	}
	switch {
	case res.code == 0 && strings.Contains(res.stdout, "porcupine: linearizable"):
		return demoRun{kind: "linearizable"}
	case strings.Contains(res.stdout, "porcupine: inconclusive"):
		return demoRun{kind: "inconclusive"}
	case strings.Contains(res.stderr, "passed with"):
		return demoRun{kind: "targets missed", detail: clip(firstLine(res.stderr), 200)}
	}
	return demoRun{kind: "error", detail: clip(strings.TrimPrefix(failure(res), "collab demo: "), 200)}
}

// crashLine is the telling line of a crashed worker's stderr: its panic
// or fatal error, else its last line.
func crashLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return panicLine(string(data))
}

// panicLine is the first line of out that starts a panic or a fatal
// error, else its last line.
func panicLine(out string) string {
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
			return strings.TrimSpace(line)
		}
	}
	return lastLine(out)
}

// lineWith returns the first line of out that contains mark.
func lineWith(out, mark string) string {
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, mark) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// lineAfter returns the line of out after the first that contains mark.
func lineAfter(out, mark string) string {
	_, rest, ok := strings.Cut(out, mark)
	if !ok {
		return ""
	}
	_, rest, _ = strings.Cut(rest, "\n")
	return strings.TrimSpace(firstLine(rest))
}

// checkerPackages are the history checker and the campaign that feeds
// it: their tests are the checker's guards, negative controls included
// (histories and campaigns with planted violations that must be found).
const checkerPackages = "./linearizability/..."

// runControls runs the checker's guards for a mutant of the checker (a
// file under linearizability/), and on the baseline: a checker that lets
// a planted violation through is caught there, where no campaign can
// catch it, since the campaign's verdict is the checker's.
func runControls(ctx context.Context, cfg *config, s *scratch, m mutant) layerResult {
	if m.patch != "" && !slices.ContainsFunc(m.files, func(f string) bool { return strings.HasPrefix(f, "linearizability/") }) {
		return layerResult{status: notApplicable, detail: "not the checker"}
	}
	return testLayer(goTest(ctx, s.repo, []string{"-race"}, []string{checkerPackages}, cfg.limits[unit]), checkerPackages)
}

// testLayer judges a go test run: a failure is a catch, naming what
// failed; pkgs names what ran, for a miss.
func testLayer(res ran, pkgs string) layerResult {
	lr := layerResult{took: res.took}
	switch {
	case res.timedOut, res.startErr != nil:
		lr.status, lr.detail = broken, failure(res)
	case res.code != 0:
		lr.status, lr.detail = caught, testFailures(res.stdout)
		if lr.detail == "" {
			lr.detail = failure(res)
		}
	default:
		lr.status, lr.detail = missed, pkgs
	}
	return lr
}

// runUnit runs go test -race on the packages m touches and those that
// import them: a failure is a catch, and names the tests that failed.
func runUnit(ctx context.Context, cfg *config, s *scratch, m mutant) layerResult {
	if m.needsPostgres() && cfg.pgURL == "" {
		return layerResult{status: needsPG, detail: "COLLAB_TEST_POSTGRES_URL is unset"}
	}
	var pkgs []string
	for _, p := range m.packages() {
		if goFiles, _ := filepath.Glob(filepath.Join(s.repo, p, "*.go")); len(goFiles) > 0 {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) == 0 {
		return layerResult{status: notApplicable, detail: "no Go package touched"}
	}
	pkgs, err := withImporters(ctx, s.repo, pkgs, false)
	if err != nil {
		return layerResult{status: broken, detail: err.Error()}
	}
	return testLayer(goTest(ctx, s.repo, []string{"-race"}, pkgs, cfg.limits[unit]), strings.Join(pkgs, " "))
}

// goCommand is the go command: go run puts its own first on PATH.
func goCommand() string { return "go" }

// failure describes a command that did not succeed.
func failure(res ran) string {
	switch {
	case res.startErr != nil:
		return res.startErr.Error()
	case res.interrupted:
		return "interrupted"
	case res.timedOut:
		return "timed out after " + roundTook(res.took)
	}
	if line := firstLine(res.stderr); line != "" {
		return fmt.Sprintf("exit status %d: %s", res.code, line)
	}
	return fmt.Sprintf("exit status %d", res.code)
}

func firstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// clip shortens s to at most n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// roundTook renders a duration for the table: tenths below ten seconds,
// whole seconds above.
func roundTook(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// pidNamespaces is the campaign's --pid-namespaces: one worker in four in
// a pid namespace of its own where that can be made (Linux, as root).
func pidNamespaces() string {
	if runtime.GOOS == "linux" && os.Geteuid() == 0 {
		return "1"
	}
	return "0"
}
