package platform

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"
)

func TestTryLockExcludesOtherOpensUntilUnlock(t *testing.T) {
	name := filepath.Join(t.TempDir(), "key.lock")
	fsys := OSFS()
	first, err := fsys.TryLock(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.TryLock(name); !errors.Is(err, ErrLocked) {
		t.Fatalf("second TryLock while held = %v, want ErrLocked", err)
	}
	// Reading the file through another descriptor must not drop the lock,
	// as closing any descriptor would with fcntl locks.
	if _, err := fsys.ReadFile(name, 64); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.TryLock(name); !errors.Is(err, ErrLocked) {
		t.Fatalf("TryLock after another descriptor closed = %v, want ErrLocked", err)
	}
	if err := first.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := first.Unlock(); err != nil {
		t.Fatalf("second Unlock = %v, want nil (idempotent)", err)
	}
	again, err := fsys.TryLock(name)
	if err != nil {
		t.Fatalf("TryLock after Unlock = %v", err)
	}
	again.Unlock()
}

func TestTryLockOneWinnerAmongGoroutines(t *testing.T) {
	name := filepath.Join(t.TempDir(), "key.lock")
	const n = 16
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []Unlocker
		start   = make(chan struct{})
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			l, err := OSFS().TryLock(name)
			if errors.Is(err, ErrLocked) {
				return
			}
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			winners = append(winners, l)
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("%d goroutines hold the lock, want 1", len(winners))
	}
	winners[0].Unlock()
}

func TestTryLockMissingDirectory(t *testing.T) {
	_, err := OSFS().TryLock(filepath.Join(t.TempDir(), "absent", "key.lock"))
	if err == nil || errors.Is(err, ErrLocked) {
		t.Fatalf("TryLock in a missing directory = %v, want a path error", err)
	}
}

func TestFileLocked(t *testing.T) {
	name := filepath.Join(t.TempDir(), "key.lock")
	if held, err := FileLocked(name); err != nil || held {
		t.Fatalf("FileLocked of a missing file = %v, %v; want false, nil", held, err)
	}
	if _, err := OSFS().Lstat(name); err == nil {
		t.Fatal("FileLocked created the file")
	}
	l, err := OSFS().TryLock(name)
	if err != nil {
		t.Fatal(err)
	}
	if held, err := FileLocked(name); err != nil || !held {
		t.Fatalf("FileLocked while held = %v, %v; want true, nil", held, err)
	}
	l.Unlock()
	if held, err := FileLocked(name); err != nil || held {
		t.Fatalf("FileLocked after Unlock = %v, %v; want false, nil", held, err)
	}
	// The probe let go of its shared lock: the file can be locked again.
	again, err := OSFS().TryLock(name)
	if err != nil {
		t.Fatalf("TryLock after a probe = %v", err)
	}
	again.Unlock()
}
