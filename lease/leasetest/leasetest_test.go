package leasetest_test

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/rivus/collab/internal/keylock"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/file"
	"github.com/rivus/collab/lease/leasetest"
	"github.com/rivus/collab/lease/store"
	"go.uber.org/goleak"
)

// mutantEnv switches a re-executed test binary into running the suite
// against the broken repository it names.
const mutantEnv = "COLLAB_LEASETEST_MUTANT"

func TestMain(m *testing.M) {
	if os.Getenv(mutantEnv) != "" {
		// A mutant fails its tests by design, which may leave a waiter
		// behind; the leak check belongs to the parent.
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(m)
}

// TestRunMemory runs the suite against the memory repository or, in a
// child of TestSuiteCatchesMutants, against the mutant its environment
// names.
func TestRunMemory(t *testing.T) {
	open := func(*testing.T) store.Repository { return lease.NewMemoryRepository() }
	if name := os.Getenv(mutantEnv); name != "" {
		m, ok := mutants[name]
		if !ok || m.open == nil {
			t.Fatalf("no mutant %q of the memory repository", name)
		}
		open = func(*testing.T) store.Repository { return m.open() }
	}
	leasetest.Run(t, open)
}

// TestRunShared runs the shared suite against the file repository or, in
// a child of TestSuiteCatchesMutants, against the mutant its environment
// names. The suite's own child, which holds a fence, inherits that
// environment and so opens the same mutant.
func TestRunShared(t *testing.T) {
	open := openFile
	if name := os.Getenv(mutantEnv); name != "" {
		m, ok := mutants[name]
		if !ok || m.shared == nil {
			t.Fatalf("no mutant %q of a shared repository", name)
		}
		open = m.shared
	}
	leasetest.RunShared(t, open)
}

// openFile opens the file repository in dir.
func openFile(t *testing.T, dir string) store.Repository {
	r, err := file.Open(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// mutants are repositories each broken in one way, and the subtests of
// the suite that must catch it: a mutant of the memory repository (open)
// under Run, one of a shared repository (shared) under RunShared.
var mutants = map[string]struct {
	open   func() store.Repository
	shared func(t *testing.T, dir string) store.Repository
	fail   []string
}{
	"no compare":               {open: func() store.Repository { return noCompare{lease.NewMemoryRepository()} }, fail: []string{"CreateTwiceConflicts", "StaleRevisionConflicts"}},
	"no fence":                 {open: func() store.Repository { return noFence{lease.NewMemoryRepository()} }, fail: []string{"FenceExcludes", "FenceUnlockIdempotent"}},
	"unlock not once":          {open: func() store.Repository { return newUnlockNotOnce() }, fail: []string{"FenceUnlockIdempotent"}},
	"keys folded":              {open: func() store.Repository { return foldKeys{lease.NewMemoryRepository()} }, fail: []string{"AwkwardKeys"}},
	"keys not checked":         {open: func() store.Repository { return anyKey{lease.NewMemoryRepository()} }, fail: []string{"InvalidKeys"}},
	"context ignored":          {open: func() store.Repository { return noContext{lease.NewMemoryRepository()} }, fail: []string{"EndedContext"}},
	"batch all or none":        {open: func() store.Repository { return allOrNone{lease.NewMemoryRepository()} }, fail: []string{"BatchSaver"}},
	"save under a shared lock": {open: func() store.Repository { return sharedLock{lease.NewMemoryRepository(), new(sync.RWMutex)} }, fail: []string{"InterleavedSavesOneWins"}},
	"waiter frees the fence":   {open: func() store.Repository { return newWaiterFrees() }, fail: []string{"FenceHeldThroughLoss"}},
	"fence of one process":     {shared: openProcessFence, fail: []string{"FenceOtherProcess"}},
}

// TestSuiteCatchesMutants runs the suite against each mutant in a child
// process and checks that the subtests meant to catch it fail.
func TestSuiteCatchesMutants(t *testing.T) {
	for name, m := range mutants {
		t.Run(name, func(t *testing.T) {
			suite := "TestRunMemory"
			if m.shared != nil {
				suite = "TestRunShared"
			}
			cmd := exec.Command(os.Args[0], "-test.run=^"+suite+"$", "-test.timeout=2m")
			cmd.Env = append(os.Environ(), mutantEnv+"="+name)
			out, err := cmd.CombinedOutput()
			if _, failed := err.(*exec.ExitError); !failed {
				t.Fatalf("the suite passed a repository with %s (%v):\n%s", name, err, out)
			}
			for _, sub := range m.fail {
				if !strings.Contains(string(out), "--- FAIL: "+suite+"/"+sub+" ") {
					t.Errorf("subtest %s did not catch a repository with %s:\n%s", sub, name, out)
				}
			}
		})
	}
}

// noCompare saves over whatever revision is stored.
type noCompare struct{ *lease.MemoryRepository }

func (r noCompare) Save(ctx context.Context, key string, s store.Snapshot, _ store.Revision) (store.Revision, error) {
	rec, _, err := r.Load(ctx, key)
	if err != nil {
		return 0, err
	}
	return r.MemoryRepository.Save(ctx, key, s, rec.Revision)
}

// noFence hands out every fence at once.
type noFence struct{ *lease.MemoryRepository }

func (noFence) Fence(context.Context, string) (func(), error) { return func() {}, nil }

// unlockNotOnce has fences whose unlock releases whoever holds the key.
type unlockNotOnce struct {
	*lease.MemoryRepository
	mu   *sync.Mutex
	sems map[string]chan struct{}
}

func newUnlockNotOnce() unlockNotOnce {
	return unlockNotOnce{lease.NewMemoryRepository(), new(sync.Mutex), map[string]chan struct{}{}}
}

func (r unlockNotOnce) Fence(ctx context.Context, key string) (func(), error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	r.mu.Lock()
	sem, ok := r.sems[key]
	if !ok {
		sem = make(chan struct{}, 1)
		r.sems[key] = sem
	}
	r.mu.Unlock()
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	return func() {
		select {
		case <-sem:
		default:
		}
	}, nil
}

// foldKeys stores keys in lower case, as a case-insensitive file system
// would with naive file names.
type foldKeys struct{ *lease.MemoryRepository }

func (r foldKeys) Load(ctx context.Context, key string) (store.Record, bool, error) {
	return r.MemoryRepository.Load(ctx, strings.ToLower(key))
}

func (r foldKeys) Save(ctx context.Context, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	return r.MemoryRepository.Save(ctx, strings.ToLower(key), s, expected)
}

func (r foldKeys) WatchFreed(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return r.MemoryRepository.WatchFreed(ctx, strings.ToLower(key))
}

// anyKey accepts every key by storing it hex-encoded.
type anyKey struct{ *lease.MemoryRepository }

func (r anyKey) Load(ctx context.Context, key string) (store.Record, bool, error) {
	return r.MemoryRepository.Load(ctx, "k"+hex.EncodeToString([]byte(key)))
}

func (r anyKey) Save(ctx context.Context, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	return r.MemoryRepository.Save(ctx, "k"+hex.EncodeToString([]byte(key)), s, expected)
}

func (r anyKey) Fence(ctx context.Context, key string) (func(), error) {
	return r.MemoryRepository.Fence(ctx, "k"+hex.EncodeToString([]byte(key)))
}

func (r anyKey) WatchFreed(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return r.MemoryRepository.WatchFreed(ctx, "k"+hex.EncodeToString([]byte(key)))
}

// noContext ignores its callers' contexts in Load and Save. (A Fence that
// ignored them would hang the suite rather than fail it.)
type noContext struct{ *lease.MemoryRepository }

func (r noContext) Load(_ context.Context, key string) (store.Record, bool, error) {
	return r.MemoryRepository.Load(context.Background(), key)
}

func (r noContext) Save(_ context.Context, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	return r.MemoryRepository.Save(context.Background(), key, s, expected)
}

// allOrNone fails a whole batch when one write fails.
type allOrNone struct{ *lease.MemoryRepository }

func (r allOrNone) SaveBatch(ctx context.Context, writes []store.Write) ([]store.Revision, []error) {
	revs, errs := make([]store.Revision, len(writes)), make([]error, len(writes))
	for _, w := range writes {
		rec, _, err := r.Load(ctx, w.Key)
		if err == nil && rec.Revision != w.Expected {
			err = &store.RevisionConflictError{Key: w.Key, Expected: w.Expected, Actual: rec.Revision}
		}
		if err != nil {
			for j := range errs {
				errs[j] = err
			}
			return revs, errs
		}
	}
	return r.MemoryRepository.SaveBatch(ctx, writes)
}

// sharedLock compares and writes under a lock it holds shared, as a file
// store would that took its lock file with LOCK_SH, or a store that took
// an RWMutex's RLock: it reads the record, compares its revision, and
// writes over whatever the storage holds then (a memory repository here,
// as a rename replaces a file), each a call that takes the context, as a
// database's do. Two saves over one revision can both read it, both pass
// the comparison and both write.
type sharedLock struct {
	*lease.MemoryRepository
	mu *sync.RWMutex
}

func (r sharedLock) Save(ctx context.Context, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	rec, _, err := r.Load(ctx, key)
	if err != nil {
		return 0, err
	}
	if rec.Revision != expected {
		return 0, &store.RevisionConflictError{Key: key, Expected: expected, Actual: rec.Revision}
	}
	for {
		cur, _, err := r.Load(ctx, key)
		if err != nil {
			return 0, err
		}
		rev, err := r.MemoryRepository.Save(ctx, key, s, cur.Revision)
		if !errors.Is(err, store.ErrRevisionConflict) {
			return rev, err
		}
	}
}

// waiterFrees has fences whose waiter, when its context ends, removes the
// key's lock, as a store would that removes the lock file it opened when
// it gives up (to leave no file behind for a key it never got): the
// holder keeps the old lock, and the next caller makes a new one and
// takes it at once. When a lease is lost, the waiter that gives up is
// one of the lost holder's fenced calls, and the next caller is the
// successor, whose fenced work then runs beside the lost holder's.
type waiterFrees struct {
	*lease.MemoryRepository
	mu    *sync.Mutex
	locks map[string]chan struct{} // a key's lock, full while held
}

func newWaiterFrees() waiterFrees {
	return waiterFrees{lease.NewMemoryRepository(), new(sync.Mutex), map[string]chan struct{}{}}
}

func (r waiterFrees) Fence(ctx context.Context, key string) (func(), error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	r.mu.Lock()
	lock, ok := r.locks[key]
	if !ok {
		lock = make(chan struct{}, 1)
		r.locks[key] = lock
	}
	r.mu.Unlock()
	select {
	case lock <- struct{}{}:
	case <-ctx.Done():
		r.mu.Lock()
		delete(r.locks, key)
		r.mu.Unlock()
		return nil, context.Cause(ctx)
	}
	var once sync.Once
	return func() { once.Do(func() { <-lock }) }, nil
}

// processFence keeps a file repository's records but fences with a mutex
// per key in this process's memory, which its handles share, and no lock
// file: the goroutines of one process exclude each other, and another
// process takes the fence beside them.
type processFence struct {
	*file.Repository
	dir string
}

// processFences are the fences of every processFence in this process.
var processFences keylock.Locks

func openProcessFence(t *testing.T, dir string) store.Repository {
	r, err := file.Open(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	return processFence{r, dir}
}

func (r processFence) Fence(ctx context.Context, key string) (func(), error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return processFences.Lock(ctx, r.dir+"\x00"+key)
}
