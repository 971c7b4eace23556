//go:build !linux

package platform

import "errors"

// FlockHolders is not known here: only linux lists its flock holders.
// It fails with errors.ErrUnsupported.
func FlockHolders(string) ([]int, error) { return nil, errors.ErrUnsupported }

// RecordLockHolders is not known here: only linux lists its lock holders.
// It fails with errors.ErrUnsupported: "nobody" would be a guess.
func RecordLockHolders(string, int64, int64) ([]int, error) { return nil, errors.ErrUnsupported }
