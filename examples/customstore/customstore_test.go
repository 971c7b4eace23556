package customstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/examples/customstore"
	"github.com/rivus/collab/lease/leasetest"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/linearizability/torture"
	"github.com/rivus/collab/platform/sqlite"
)

// The campaign's workers are re-executions of this test binary: the store
// is registered before WorkerMain, which runs a worker and exits.
func TestMain(m *testing.M) {
	torture.Register("app", func(ctx context.Context, dir string, _ int) (store.Repository, torture.Resource, error) {
		repo, err := customstore.Open(sqlite.OS(), dir)
		if err != nil {
			return nil, nil, err
		}
		results, err := repo.Results(ctx)
		if err != nil {
			return nil, nil, errors.Join(err, repo.Close())
		}
		return repo, results, nil
	})
	torture.WorkerMain()
	os.Exit(m.Run())
}

// TestConformance runs collab's repository suite.
func TestConformance(t *testing.T) {
	leasetest.Run(t, func(t *testing.T) store.Repository {
		r, err := customstore.Open(sqlite.OS(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	})
}

// TestCampaign runs the fault campaign on the repository: worker
// processes take leases and make fenced writes to the results table
// while they are killed and paused, and porcupine checks the history.
func TestCampaign(t *testing.T) {
	r, err := torture.Run(context.Background(), torture.Config{
		Dir:       filepath.Join(t.TempDir(), "run"),
		Store:     "app",
		Duration:  3 * time.Second,
		MinOps:    200,
		MinKills:  5,
		MinPauses: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	var summary strings.Builder
	r.Print(&summary)
	if r.Failed() {
		t.Fatalf("the campaign failed:\n%s", summary.String())
	}
	t.Logf("\n%s", summary.String())
}
