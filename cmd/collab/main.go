// Command collab is the command line of the collab library.
//
// Usage:
//
//	collab check [--larger] [--timeout D] [--max-states N] [--fingerprint] [--progress] [--workers N] [SPEC.fsm...]
//	                           model-check the shipped policies, or specs against
//	                           their family's world; exit 1 with the trace on a violation
//	collab demo [--duration D] [--store sqlite|file] [--seed N] [--workers N] [--dir DIR] [--html PATH]
//	            [--min-ops N] [--min-kills N] [--min-pauses N]
//	                           a torture campaign: worker processes take leases and locks
//	                           while they are killed and paused; porcupine checks the history
//	collab gen [-out DIR] [-pkg NAME] SPEC.fsm...
//	                           generate Go policies from spec files (as fsmgen)
//	collab identity            print this process's identity and how it judges itself
//	collab judge STAMP|-       judge a stored identity (JSON) from this process table
//	collab lease run --store STORE --key KEY [--ttl D] [--heartbeat D] [--wait] -- COMMAND [ARG...]
//	                           run COMMAND holding a lease; COLLAB_LEASE_KEY and
//	                           COLLAB_LEASE_TOKEN in its environment; exit 75 when
//	                           held, 76 when the lease was lost (the command stopped)
//	collab lease ls --store STORE [--json]
//	                           list keys with generation, state, holder, age
//	collab lease break --store STORE --key KEY [--force]
//	                           end a stuck holder's lease: a tombstone of the next
//	                           generation fences it out; a holder that may still run
//	                           on this host only with --force (exit 75 without)
//	collab lock [--wait] [--timeout D] [--lock-file] PATH -- COMMAND [ARG...]
//	                           run COMMAND holding the process lock at PATH; the
//	                           lock's guard is its descriptor $COLLAB_LOCK_FD (3), which
//	                           keeps the lock held until the last process holding it ends;
//	                           --lock-file for a directory others can write in, such as /tmp
//	collab lock status [--json] [--lock-file] PATH
//	                           tell whether the lock is held, and by whom
//	collab help                list the commands
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/rivus/collab/gen"
	"github.com/rivus/collab/linearizability/torture"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
	"github.com/rivus/collab/worldmodel"
)

// command is one subcommand: run gets the arguments after its name.
type command struct {
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

func commands() map[string]command {
	return map[string]command{
		"check":    {"model-check the shipped policies, or specs against their family: check [SPEC.fsm...]", runCheck},
		"demo":     {"a 20-30 s torture campaign of real processes, SIGKILL and SIGSTOP, checked by porcupine: demo [--duration D] [--store sqlite|file] [--seed N]", runDemo},
		"gen":      {"generate Go policies from spec files: gen [-out DIR] [-pkg NAME] SPEC.fsm...", runGen},
		"identity": {"print this process's identity (JSON) and its judgement", runIdentity},
		"judge":    {"judge a stored identity: collab judge '{...}' or - for stdin", runJudge},
		"lease":    {"run a command holding a lease (lease run), list a store's leases (lease ls), or break one (lease break)", runLease},
		"lock":     {"run a command holding a process lock; lock status PATH tells who holds it", runLock},
	}
}

func main() {
	// A torture campaign's worker is this executable started again: it
	// does its work and exits here.
	torture.WorkerMain()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 {
		// No command is a usage error, as with any other tool: a script
		// that forgot its arguments must not see success.
		usage(stderr, cmds)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout, cmds)
		return 0
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "collab: unknown command %q\n", args[0])
		usage(stderr, cmds)
		return 2
	}
	return c.run(args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "usage: collab COMMAND [ARGS]")
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
}

// flagError reports a flag whose value parses but makes no sense, such
// as a negative duration.
type flagError struct {
	Flag   string // its name, without dashes
	Value  string // its value, as the flag package prints it
	Reason string
}

func (e *flagError) Error() string {
	return fmt.Sprintf("invalid value %q for flag --%s: %s", e.Value, e.Flag, e.Reason)
}

// nonNegative returns a *flagError when v, the value of the flag name,
// is negative; zero says what 0 means.
func nonNegative[T ~int | ~int64](name string, v T, zero string) error {
	if v >= 0 {
		return nil
	}
	return &flagError{Flag: name, Value: fmt.Sprint(v), Reason: fmt.Sprintf("negative; want 0 (%s) or more", zero)}
}

// reportAll prints each non-nil error of errs on its own line, prefixed
// with cmd, and reports whether there was one.
func reportAll(stderr io.Writer, cmd string, errs ...error) bool {
	found := false
	for _, err := range errs {
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
			found = true
		}
	}
	return found
}

func runGen(args []string, _ io.Reader, _, stderr io.Writer) int {
	return gen.MainChecked("collab gen", args, stderr, checkBeforeGen)
}

// checkBeforeGen model-checks a family's policy at its default bounds, as
// collab check does, before collab gen writes it.
func checkBeforeGen(spec string, t *policy.Table) (string, error) {
	rep, err := worldmodel.CheckPolicy(policy.Compile(t), modelcheck.Options{Timeout: 5 * time.Minute})
	var noModel *worldmodel.ModelError
	switch {
	case errors.As(err, &noModel) && t.Family == "":
		return "not model-checked: a machine of no family has no world to check it in", nil
	case err != nil:
		return "", err
	case rep.Verdict != modelcheck.Passed:
		return "", fmt.Errorf("collab check does not pass it:\n%s\n%s", rep.Summary, rep.Trace)
	}
	return "", nil
}
