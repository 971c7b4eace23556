package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/internal/command"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
	"github.com/rivus/collab/worldmodel"
)

func runCheck(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("collab check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := command.DurationFlag(fs, "timeout", 5*time.Minute, "give up on a policy after this long, the verdict then incomplete (0: no limit)")
	maxStates := fs.Int("max-states", 0, "give up on a policy after this many states (0: no limit)")
	fingerprint := fs.Bool("fingerprint", false, "keep 64-bit hashes of worlds instead of the worlds")
	progress := fs.Bool("progress", false, "print a progress line every few seconds")
	larger := fs.Bool("larger", false, "check beyond the default bounds (minutes, not seconds; see worldmodel.CheckPolicyLarger)")
	workers := fs.Int("workers", runtime.NumCPU(), "explore with this many goroutines (the same states, verdict and trace as one)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: collab check [flags] [SPEC.fsm...]\n\nWith no spec, checks the shipped turn, lane and lease policies; with specs,\nchecks each against its family's world at the default bounds.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var workersErr error
	if *workers < 1 {
		workersErr = fmt.Errorf("--workers: is %d; want 1 or more", *workers)
	}
	if command.ReportAll(stderr, "collab check", command.NonNegative("timeout", *timeout, "no limit"), command.NonNegative("max-states", *maxStates, "no limit"), workersErr) {
		return 2
	}
	c := &checker{stdout: stdout, stderr: stderr, larger: *larger,
		opts: modelcheck.Options{Timeout: *timeout, MaxStates: *maxStates, Fingerprint: *fingerprint, Workers: *workers}}
	if *progress {
		c.opts.Progress = stderr
	}
	if fs.NArg() == 0 {
		for _, p := range []policy.Policy{fsm.TurnPolicy, fsm.LanePolicy, fsm.LeasePolicy} {
			c.check(p)
		}
		return c.status
	}
	for _, path := range fs.Args() {
		src, err := os.ReadFile(path)
		if err == nil {
			var p policy.Policy
			if p, err = worldmodel.SpecPolicy(path, src); err == nil {
				c.check(p)
				continue
			}
		}
		c.show(worldmodel.CheckReport{}, err)
	}
	return c.status
}

// checker checks policies and prints their verdicts; status becomes 1 at
// the first policy that does not pass or cannot be checked.
type checker struct {
	stdout, stderr io.Writer
	opts           modelcheck.Options
	larger         bool
	status         int
}

// check checks p at the default bounds, or beyond them with --larger,
// after saying which guarantees of its family it keeps and waives.
func (c *checker) check(p policy.Policy) {
	c.guarantees(p)
	if !c.larger {
		c.show(worldmodel.CheckPolicy(p, c.opts))
		return
	}
	reps, err := worldmodel.CheckPolicyLarger(p, c.opts)
	for _, rep := range reps {
		c.show(rep, nil)
	}
	if err != nil {
		c.show(worldmodel.CheckReport{}, err)
	}
}

// show prints a verdict, with its trace when it is not Passed, or the
// error that kept a policy from being checked.
func (c *checker) show(rep worldmodel.CheckReport, err error) {
	if err != nil {
		fmt.Fprintf(c.stderr, "collab check: %v\n", err)
		c.status = 1
		return
	}
	fmt.Fprintln(c.stdout, rep.Summary)
	if rep.Verdict != modelcheck.Passed {
		fmt.Fprint(c.stdout, rep.Trace)
		c.status = 1
	}
}

// guarantees prints the guarantees p keeps and those its spec waives,
// with the spec's reason; the safety properties every policy keeps go
// unsaid.
func (c *checker) guarantees(p policy.Policy) {
	kept, waived := policy.Guarantees(p)
	if len(kept)+len(waived) == 0 {
		return
	}
	fmt.Fprintf(c.stdout, "%s (family %s): the family's safety properties, and\n", p.Name(), p.Family())
	for _, g := range kept {
		fmt.Fprintf(c.stdout, "  keeps  %s: %s\n", g.Name, g.Doc)
	}
	for _, g := range waived {
		why := ""
		for _, w := range p.Table().Waived {
			if w.Name == g.Name {
				why = w.Doc
			}
		}
		fmt.Fprintf(c.stdout, "  waives %s: %s\n         because: %s\n", g.Name, g.Doc, strings.ReplaceAll(why, "\n", " "))
	}
}
