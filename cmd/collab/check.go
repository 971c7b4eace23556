package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/gen"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

func runCheck(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("collab check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 5*time.Minute, "give up on a policy after this long, the verdict then incomplete (0: no limit)")
	maxStates := fs.Int("max-states", 0, "give up on a policy after this many states (0: no limit)")
	fingerprint := fs.Bool("fingerprint", false, "keep 64-bit hashes of worlds instead of the worlds")
	progress := fs.Bool("progress", false, "print a progress line every few seconds")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: collab check [flags] [SPEC.fsm...]\n\nWith no spec, checks the shipped turn, lane and lease policies; with specs,\nchecks each against its family's world at the default bounds.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if reportAll(stderr, "collab check", nonNegative("timeout", *timeout, "no limit"), nonNegative("max-states", *maxStates, "no limit")) {
		return 2
	}
	opts := modelcheck.Options{Timeout: *timeout, MaxStates: *maxStates, Fingerprint: *fingerprint}
	if *progress {
		opts.Progress = stderr
	}
	policies, err := policiesOf(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	status := 0
	for _, p := range policies {
		rep, err := fsm.CheckPolicy(p, opts)
		if err != nil {
			fmt.Fprintf(stderr, "collab check: %v\n", err)
			status = 1
			continue
		}
		fmt.Fprintln(stdout, rep.Summary)
		if rep.Verdict != modelcheck.Passed {
			fmt.Fprint(stdout, rep.Trace)
			status = 1
		}
	}
	return status
}

// policiesOf returns the shipped policies, or those of the spec files.
func policiesOf(specs []string) ([]policy.Policy, error) {
	if len(specs) == 0 {
		return []policy.Policy{fsm.TurnPolicy, fsm.LanePolicy, fsm.LeasePolicy}, nil
	}
	var (
		out  []policy.Policy
		errs []error
	)
	for _, path := range specs {
		src, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("collab check: %w", err))
			continue
		}
		spec, err := gen.Parse(path, src)
		if err == nil {
			var t *policy.Table
			if t, err = gen.Validate(spec); err == nil {
				out = append(out, policy.Compile(t))
				continue
			}
		}
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}
