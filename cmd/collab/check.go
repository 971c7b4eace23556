package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
	"github.com/rivus/collab/worldmodel"
)

func runCheck(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("collab check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 5*time.Minute, "give up on a policy after this long, the verdict then incomplete (0: no limit)")
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
	if reportAll(stderr, "collab check", nonNegative("timeout", *timeout, "no limit"), nonNegative("max-states", *maxStates, "no limit"), workersErr) {
		return 2
	}
	opts := modelcheck.Options{Timeout: *timeout, MaxStates: *maxStates, Fingerprint: *fingerprint, Workers: *workers}
	if *progress {
		opts.Progress = stderr
	}
	status := 0
	show := func(rep worldmodel.CheckReport, err error) {
		if err != nil {
			fmt.Fprintf(stderr, "collab check: %v\n", err)
			status = 1
			return
		}
		fmt.Fprintln(stdout, rep.Summary)
		if rep.Verdict != modelcheck.Passed {
			fmt.Fprint(stdout, rep.Trace)
			status = 1
		}
	}
	check := func(p policy.Policy) {
		if !*larger {
			show(worldmodel.CheckPolicy(p, opts))
			return
		}
		reps, err := worldmodel.CheckPolicyLarger(p, opts)
		for _, rep := range reps {
			show(rep, nil)
		}
		if err != nil {
			show(worldmodel.CheckReport{}, err)
		}
	}
	if fs.NArg() == 0 {
		for _, p := range []policy.Policy{fsm.TurnPolicy, fsm.LanePolicy, fsm.LeasePolicy} {
			check(p)
		}
		return status
	}
	for _, path := range fs.Args() {
		src, err := os.ReadFile(path)
		if err == nil {
			var p policy.Policy
			if p, err = worldmodel.SpecPolicy(path, src); err == nil {
				check(p)
				continue
			}
		}
		show(worldmodel.CheckReport{}, err)
	}
	return status
}
