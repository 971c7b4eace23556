package platform

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFlockHolders: the kernel's table names the process that holds a
// flock on a file, not the holders of another file, and nobody once the
// lock is let go.
func TestFlockHolders(t *testing.T) {
	dir := t.TempDir()
	held, other := filepath.Join(dir, "held"), filepath.Join(dir, "other")
	u, err := OSFS().TryLock(held)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Unlock()
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if pids, err := FlockHolders(held); err != nil || !slices.Equal(pids, []int{os.Getpid()}) {
		t.Fatalf("FlockHolders = %v, %v; want this process, %d", pids, err, os.Getpid())
	}
	if pids, err := FlockHolders(other); err != nil || len(pids) != 0 {
		t.Fatalf("FlockHolders of a file nobody locked = %v, %v; want none", pids, err)
	}
	if err := u.Unlock(); err != nil {
		t.Fatal(err)
	}
	if pids, err := FlockHolders(held); err != nil || len(pids) != 0 {
		t.Fatalf("FlockHolders after the unlock = %v, %v; want none", pids, err)
	}
}
