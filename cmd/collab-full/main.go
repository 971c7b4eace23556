// Command collab-full is the whole command line of collab in one
// executable: every command of collab (see cmd/collab), with PostgreSQL,
// modernc.org/sqlite, the model checker, the generator and the campaign
// linked. collab runs it for lease, check, gen and demo, which it does
// not link; run directly, it takes every command itself, its lock's
// SQLite mode through modernc.org/sqlite.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rivus/collab/gen"
	"github.com/rivus/collab/internal/command"
	"github.com/rivus/collab/linearizability/torture"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/platform/sqlite"
	"github.com/rivus/collab/policy"
	"github.com/rivus/collab/worldmodel"
)

// commands are every command, each run here.
func commands() map[string]command.Command {
	own := map[string]command.RunFunc{"check": runCheck, "demo": runDemo, "gen": runGen, "lease": runLease}
	return command.All(func(name string) command.RunFunc { return own[name] })
}

// init gives the commands their platform: the operating system with
// modernc.org/sqlite, for SQLite lease stores and SQLite-mode locks.
func init() { command.Host = sqlite.OS }

func main() {
	// A torture campaign's worker is this executable started again: it
	// does its work and exits here.
	torture.WorkerMain()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return command.Run(commands(), args, stdin, stdout, stderr)
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
