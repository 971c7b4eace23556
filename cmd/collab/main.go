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
//
// collab is two executables, installed side by side (make install, or
// go install github.com/rivus/collab/cmd/...). collab itself links only
// the commands that run without SQLite, PostgreSQL or the checkers (lock,
// lock status, identity, judge), so that `collab lock PATH -- COMMAND`
// starts about as fast as flock(1): a Go program's start grows with what
// it links. It runs lease, check, gen and demo by executing collab-full,
// which links everything, in its place: found beside collab's own
// executable first, then on PATH.
//
// collab takes a lock's SQLite mode (the default) through the kernel
// alone: the write locks SQLite's unix VFS holds on a lock database it has
// locked exclusively, taken without opening SQLite. Holders through SQLite
// (collab-full lock, plock's SQLite mode in any program) and through the
// kernel exclude each other. Where there are no POSIX locks (windows),
// collab links modernc.org/sqlite and takes the lock through it.
package main

import (
	"os"

	"github.com/rivus/collab/internal/command"
)

// fullName is the executable that runs the commands collab does not link.
const fullName = "collab-full"

func main() {
	command.Host = host
	os.Exit(command.Run(command.All(runFull), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
