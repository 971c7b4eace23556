package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rivus/collab/internal/command"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// breakTimeout bounds a break against a store that does not answer.
const breakTimeout = 30 * time.Second

// errBreakSilent ends a break the store did not answer within breakTimeout.
var errBreakSilent = errors.New("the store did not answer within " + breakTimeout.String())

// runLeaseBreak ends a stuck holder's lease (lease.Break): 0 when broken,
// 75 when a holder that may still run on this host is refused without
// --force, 3 when there is no lease to break, 1 when the store fails, 2
// on bad usage (a bad --key among it, found before the store is opened).
func runLeaseBreak(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("collab lease break", leaseBreakUsage, stderr)
	storeSpec := fs.String("store", os.Getenv(command.StoreEnv), "a SQLite file path, dir:PATH, or a postgres:// URL (default $"+command.StoreEnv+")")
	key := fs.String("key", "", "the key whose lease to break")
	force := fs.Bool("force", false, "break a holder that may still run on this host too")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case *key == "":
		return missing(fs, stderr, "--key is required")
	case fs.NArg() != 0:
		return missing(fs, stderr, fmt.Sprintf("unexpected arguments %q", fs.Args()))
	}
	if err := store.ValidateKey(*key); err != nil {
		fmt.Fprintf(stderr, "collab lease break: --key: %v\n", err)
		return 2
	}
	p := command.Host()
	st, code := openExistingStore(p, *storeSpec, "collab lease break", true, stderr)
	if code != 0 {
		return code
	}
	defer st.close()
	// A store that does not answer fails the break, as it fails lease run.
	ctx, cancel := context.WithTimeoutCause(context.Background(), breakTimeout, errBreakSilent)
	defer cancel()
	broken, err := lease.Break(ctx, st.repo, p, *key, *force)
	var held *lease.HeldError
	switch {
	case errors.As(err, &held):
		fmt.Fprintf(stderr, "collab lease break: %q is held by pid %d on %s, which may still run on this host; --force breaks it anyway\n",
			*key, held.Holder.PID, platform.Printable(held.Holder.Host))
		return command.ExitHeld
	case errors.Is(err, lease.ErrNotHeld):
		fmt.Fprintf(stderr, "collab lease break: %q: no lease to break (no record, or released)\n", *key)
		return exitNotHeld
	case err != nil:
		fmt.Fprintf(stderr, "collab lease break: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "broke %q: pid %d on %s held generation %d; the tombstone is generation %d\n",
		*key, broken.Holder.PID, platform.Printable(broken.Holder.Host), broken.Generation, broken.Generation+1)
	return 0
}
