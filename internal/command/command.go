// Package command holds what the two executables of collab's command line
// share: the commands that run without SQLite, PostgreSQL or the
// checkers (lock, lock status, identity, judge), running a command as a
// child under a lock or a lease, and the flags and dispatch of both.
//
// The command line is two executables because a process's start costs
// what it links: `collab` links only this package, so that `collab lock P
// -- CMD` starts about as fast as flock(1), and runs every other command
// (lease, check, gen, demo) by executing `collab-full`, which links
// everything. `collab` takes the lock's SQLite mode through the kernel
// alone (sqlitelock.KernelLocks): the write locks SQLite's unix VFS takes on
// the lock database, which exclude holders through SQLite, as
// `collab-full lock` and plock's SQLite mode in any program are.
package command

import (
	"fmt"
	"io"
	"sort"

	"github.com/rivus/collab/platform"
)

// Host is the platform the commands run on; each executable sets it before
// it runs a command (tests replace it). It has SQLite's locks: through
// modernc.org/sqlite in collab-full, through the kernel in collab.
var Host func() *platform.Platform

// StoreEnv names the environment variable --store defaults to: a
// PostgreSQL URL with a password is readable by every local user on a
// command line (/proc/PID/cmdline), and not in the environment. A URL
// without a password takes one from PGPASSWORD or the password file
// (PGPASSFILE, ~/.pgpass), as libpq's clients do.
const StoreEnv = "COLLAB_STORE"

// Command is one subcommand: Run gets the arguments after its name.
type Command struct {
	Summary string
	Run     RunFunc
}

// Shared returns the commands both executables run themselves.
func Shared() map[string]Command {
	return map[string]Command{
		"identity": {"print this process's identity (JSON) and its judgement", RunIdentity},
		"judge":    {"judge a stored identity: collab judge '{...}' or - for stdin", RunJudge},
		"lock":     {"run a command holding a process lock; lock status PATH tells who holds it", RunLock},
	}
}

// RunFunc runs a command with the arguments after its name, and returns
// its exit status.
type RunFunc = func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

// fullOnly are the commands only collab-full links, with their summaries.
var fullOnly = map[string]string{
	"check": "model-check the shipped policies, or specs against their family: check [SPEC.fsm...]",
	"demo":  "a 20-30 s torture campaign of real processes, SIGKILL and SIGSTOP, checked by porcupine: demo [--duration D] [--store sqlite|file] [--seed N]",
	"gen":   "generate Go policies from spec files: gen [-out DIR] [-pkg NAME] SPEC.fsm...",
	"lease": "run a command holding a lease (lease run), list a store's leases (lease ls), or break one (lease break)",
}

// All returns every command: the shared ones, and those only collab-full
// links, each run by runner(name).
func All(runner func(name string) RunFunc) map[string]Command {
	cmds := Shared()
	for name, summary := range fullOnly {
		cmds[name] = Command{Summary: summary, Run: runner(name)}
	}
	return cmds
}

// Run runs the command args[0] of cmds with the rest of args, and returns
// its exit status; no command, or an unknown one, is a usage error (2).
func Run(cmds map[string]Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		// No command is a usage error, as with any other tool: a script
		// that forgot its arguments must not see success.
		Usage(stderr, cmds)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		Usage(stdout, cmds)
		return 0
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "collab: unknown command %q\n", args[0])
		Usage(stderr, cmds)
		return 2
	}
	return c.Run(args[1:], stdin, stdout, stderr)
}

// Usage lists cmds.
func Usage(w io.Writer, cmds map[string]Command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "usage: collab COMMAND [ARGS]")
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].Summary)
	}
}
