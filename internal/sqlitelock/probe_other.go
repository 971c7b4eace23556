//go:build !unix

package sqlitelock

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/rivus/collab/platform"
)

// LockHeld is not used where there are no POSIX locks to query.
func LockHeld(string, func(string) bool) (bool, int, error) { return false, 0, nil }

// sqliteWriteLocked is not used where there are no POSIX locks to query:
// an attempt asks SQLite, with its busy wait.
func sqliteWriteLocked(string, func(string) bool) (bool, int) { return false, 0 }

// probeSupported: IsHeld opens the database through SQLite here, and an
// attempt asks SQLite alone.
const probeSupported = false

// takeLockBytes is not used where there are no POSIX locks: kernelKnows
// is false, and KernelLocks refuses to open the database.
func takeLockBytes(context.Context, platform.Clock, string, time.Duration) (*os.File, error) {
	return nil, errors.ErrUnsupported
}
