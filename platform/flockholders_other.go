//go:build !linux

package platform

// FlockHolders is not known here: only linux lists its flock holders.
func FlockHolders(string) ([]int, error) { return nil, nil }
