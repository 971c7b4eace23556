package leasetest_test

import (
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/rivus/collab/lease"
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
		if !ok {
			t.Fatalf("no mutant %q", name)
		}
		open = func(*testing.T) store.Repository { return m.open() }
	}
	leasetest.Run(t, open)
}

// mutants are repositories each broken in one way, and the subtests of
// the suite that must catch it.
var mutants = map[string]struct {
	open func() store.Repository
	fail []string
}{
	"no compare":        {func() store.Repository { return noCompare{lease.NewMemoryRepository()} }, []string{"CreateTwiceConflicts", "StaleRevisionConflicts"}},
	"no fence":          {func() store.Repository { return noFence{lease.NewMemoryRepository()} }, []string{"FenceExcludes", "FenceUnlockIdempotent"}},
	"unlock not once":   {func() store.Repository { return newUnlockNotOnce() }, []string{"FenceUnlockIdempotent"}},
	"keys folded":       {func() store.Repository { return foldKeys{lease.NewMemoryRepository()} }, []string{"AwkwardKeys"}},
	"keys not checked":  {func() store.Repository { return anyKey{lease.NewMemoryRepository()} }, []string{"InvalidKeys"}},
	"context ignored":   {func() store.Repository { return noContext{lease.NewMemoryRepository()} }, []string{"EndedContext"}},
	"batch all or none": {func() store.Repository { return allOrNone{lease.NewMemoryRepository()} }, []string{"BatchSaver"}},
}

// TestSuiteCatchesMutants runs the suite against each mutant in a child
// process and checks that the subtests meant to catch it fail.
func TestSuiteCatchesMutants(t *testing.T) {
	for name, m := range mutants {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestRunMemory$", "-test.timeout=2m")
			cmd.Env = append(os.Environ(), mutantEnv+"="+name)
			out, err := cmd.CombinedOutput()
			if _, failed := err.(*exec.ExitError); !failed {
				t.Fatalf("the suite passed a repository with %s (%v):\n%s", name, err, out)
			}
			for _, sub := range m.fail {
				if !strings.Contains(string(out), "--- FAIL: TestRunMemory/"+sub) {
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
