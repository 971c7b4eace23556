//go:build !unix

package plock

// sqliteLockHeld is not used where there are no POSIX locks to query.
func sqliteLockHeld(string) (bool, int, error) { return false, 0, nil }

// probeSupported: IsHeld opens the database through SQLite here.
const probeSupported = false
