package lease_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/file"
	"github.com/rivus/collab/lease/sqlite"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform/platformtest"
)

func TestKeysListsEveryRecordSorted(t *testing.T) {
	f := platformtest.New(t)
	db, err := sqlite.Open(f.Platform, filepath.Join(f.Dir, "leases.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	files, err := file.Open(f.Platform, filepath.Join(f.Dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	repos := map[string]interface {
		store.Repository
		store.Lister
	}{"memory": lease.NewMemoryRepository(), "sqlite": db, "file": files}
	long := "k/deep/" + string(slices.Repeat([]byte("z"), 240)) // nested directories in the file repository
	want := []string{"..", "A", "a b/c", long, "ünï"}
	slices.Sort(want)
	self, _ := f.Processes.Self()
	ctx := context.Background()
	for name, repo := range repos {
		t.Run(name, func(t *testing.T) {
			if keys, err := repo.Keys(ctx); err != nil || len(keys) != 0 {
				t.Fatalf("empty repository: Keys = %q, %v", keys, err)
			}
			for _, k := range want {
				s := store.Snapshot{Generation: 1, Holder: self, TTL: time.Minute}
				if _, err := repo.Save(ctx, k, s, 0); err != nil {
					t.Fatalf("Save(%q): %v", k, err)
				}
			}
			keys, err := repo.Keys(ctx)
			if err != nil || !slices.Equal(keys, want) {
				t.Fatalf("Keys = %q, %v; want %q", keys, err, want)
			}
			done, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := repo.Keys(done); err == nil {
				t.Fatal("Keys with a cancelled context succeeded")
			}
		})
	}
}
