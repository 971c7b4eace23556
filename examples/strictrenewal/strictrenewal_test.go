package strictrenewal_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivus/collab/examples/strictrenewal"
	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/platform/platformtest"
	"github.com/rivus/collab/policy"
	"github.com/rivus/collab/worldmodel"
)

// TestModelChecked: the policy keeps every invariant of the lease world.
func TestModelChecked(t *testing.T) {
	r, err := worldmodel.CheckPolicy(strictrenewal.StrictLeasePolicy, modelcheck.Options{})
	if err != nil || r.Verdict != modelcheck.Passed {
		t.Fatalf("%s, %v\n%s", r.Summary, err, r.Trace)
	}
}

// failingSaves fails every Save while failing is set.
type failingSaves struct {
	store.Repository
	failing atomic.Bool
}

var errStoreDown = errors.New("store down")

func (r *failingSaves) Save(ctx context.Context, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	if r.failing.Load() {
		return 0, errStoreDown
	}
	return r.Repository.Save(ctx, key, s, expected)
}

// TestTheRuntimeDrivesIt: with the shipped policy, a failed renewal is
// retried and the lease held; with this one, the lease is lost at once.
func TestTheRuntimeDrivesIt(t *testing.T) {
	for _, tt := range []struct {
		name     string
		p        policy.Policy
		wantLost bool
	}{{"shipped", fsm.LeasePolicy, false}, {"strict renewal", strictrenewal.StrictLeasePolicy, true}} {
		t.Run(tt.name, func(t *testing.T) {
			f := platformtest.New(t)
			repo := &failingSaves{Repository: lease.NewMemoryRepository()}
			failed := make(chan struct{}, 16)
			m, err := lease.NewManager(lease.Config{TTL: time.Minute, Heartbeat: 10 * time.Second, Repository: repo,
				Platform: f.Platform, Policy: tt.p, OnEvent: func(e lease.Event) {
					if e.Kind == lease.RenewalFailed {
						failed <- struct{}{}
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			l, err := m.Acquire(t.Context(), "k")
			if err != nil {
				t.Fatal(err)
			}
			repo.failing.Store(true)
			// The manager's timers count from its own readings of the
			// clock: moved on now, its renewal falls due at once.
			f.Clock.Advance(10 * time.Second)
			if tt.wantLost {
				select {
				case <-l.Lost():
				case <-time.After(time.Minute):
					t.Fatal("the lease is still held a minute after a failed renewal")
				}
				return
			}
			<-failed // the renewal failed, and is to be retried
			if err := l.Err(); err != nil {
				t.Fatalf("the lease ended at a failed renewal: %v", err)
			}
		})
	}
}
