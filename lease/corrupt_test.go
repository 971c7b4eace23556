package lease_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/internal/repotest"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform/platformtest"
)

// storedFields are the fields of a stored record that the corruptions
// below change; the others stay as a valid record has them.
type storedFields struct {
	holder     string // JSON
	ttl        time.Duration
	generation int64
}

// corruptions are stored values that no lease record holds: garbage
// holders, and values out of range. Each names the field it spoils and
// the reason every repository gives.
var corruptions = []struct {
	name   string
	spoil  func(*storedFields)
	reason string
}{
	{"holder empty object", func(s *storedFields) { s.holder = `{}` }, `holder: platform: invalid process identity field "bootId": missing`},
	{"holder null", func(s *storedFields) { s.holder = `null` }, `holder: platform: invalid process identity field "bootId": missing`},
	{"holder pid only", func(s *storedFields) { s.holder = `{"pid":-7}` }, `holder: platform: invalid process identity field "bootId": missing`},
	{"holder negative pid", func(s *storedFields) { s.holder = `{"host":"h","bootId":"b","pid":-7,"startTime":9}` },
		`holder: platform: invalid process identity field "pid": -7 is not a process id`},
	{"holder pid too large", func(s *storedFields) { s.holder = `{"host":"h","bootId":"b","pid":4294967297,"startTime":9}` },
		`holder: platform: invalid process identity field "pid": 4294967297 is not a process id`},
	{"holder without start time", func(s *storedFields) { s.holder = `{"host":"h","bootId":"b","pid":7}` },
		`holder: platform: invalid process identity field "startTime": missing`},
	{"holder pid a string", func(s *storedFields) { s.holder = `{"host":"h","bootId":"b","pid":"7","startTime":9}` },
		`holder: platform: invalid process identity field "pid": wrong type`},
	{"negative ttl", func(s *storedFields) { s.ttl = -5 * time.Second }, "ttl: -5s is not positive"},
	{"zero ttl", func(s *storedFields) { s.ttl = 0 }, "ttl: 0s is not positive"},
	{"generation 0", func(s *storedFields) { s.generation = 0 }, "generation: 0 is not a generation"},
}

// rawStore reaches under a repository of kind to the stored form of its
// records.
type rawStore struct {
	kind, path string
}

// where is what a *CorruptRecordError names for key.
func (s rawStore) where(key string) string {
	if s.kind == "sqlite" {
		return s.path + ", table leases"
	}
	return s.file(key)
}

// file is the record file of a key of the file repository (keys of
// letters only).
func (s rawStore) file(key string) string { return filepath.Join(s.path, key+".json") }

// spoil rewrites key's stored record, keeping its revision, with the
// fields of snap changed by the corruption.
func (s rawStore) spoil(t *testing.T, key string, snap store.Snapshot, rev store.Revision, spoil func(*storedFields)) {
	t.Helper()
	f := storedFields{holder: string(snap.Holder.Marshal()), ttl: snap.TTL, generation: int64(snap.Generation)}
	spoil(&f)
	if s.kind == "sqlite" {
		repotest.Exec(t, repotest.RawDB(t, s.path), "UPDATE leases SET holder = ?, ttl_ns = ?, generation = ? WHERE key = ? AND revision = ?",
			f.holder, int64(f.ttl), f.generation, key, int64(rev))
		return
	}
	doc := fmt.Sprintf(`{"format":1,"key":%q,"revision":%d,"lease":{"generation":%d,"holder":%s,"released":false,"renewedAt":%q,"ttl":%q}}`,
		key, rev, f.generation, f.holder, snap.RenewedAt.Format(time.RFC3339Nano), f.ttl.String())
	if err := os.WriteFile(s.file(key), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
}

// raw returns key's stored record as it is on disk, to compare.
func (s rawStore) raw(t *testing.T, key string) string {
	t.Helper()
	if s.kind == "sqlite" {
		var rev, gen, ttl int64
		var holder, renewed string
		var released bool
		err := repotest.RawDB(t, s.path).QueryRow("SELECT revision, generation, holder, released, renewed_at, ttl_ns FROM leases WHERE key = ?", key).
			Scan(&rev, &gen, &holder, &released, &renewed, &ttl)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(rev, gen, holder, released, renewed, ttl)
	}
	data, err := os.ReadFile(s.file(key))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// forRawKinds runs test on a fresh SQLite and file repository, on f's
// platform, with access to their stored records.
func forRawKinds(t *testing.T, test func(t *testing.T, f *platformtest.Fake, repo store.Repository, disk rawStore)) {
	for _, kind := range repoKinds {
		t.Run(kind, func(t *testing.T) {
			f := platformtest.New(t)
			test(t, f, openFake(t, f, kind), rawStore{kind: kind, path: repoPath(f.Dir, kind)})
		})
	}
}

// TestCorruptValuesFailTheirKey: a record whose holder is not a valid
// process identity, or whose TTL or generation is out of range, fails
// Load and Save of its key with a corrupt record error naming the key,
// the store and the field, and is never written over; the other keys
// keep working.
func TestCorruptValuesFailTheirKey(t *testing.T) {
	for _, c := range corruptions {
		t.Run(c.name, func(t *testing.T) {
			forRawKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository, disk rawStore) {
				ctx := t.Context()
				rev := mustSaveRepo(t, repo, "bad", repotest.Snap(3), 0)
				otherRev := mustSaveRepo(t, repo, "other", repotest.Snap(1), 0)
				disk.spoil(t, "bad", repotest.Snap(3), rev, c.spoil)
				before := disk.raw(t, "bad")

				_, _, err := repo.Load(ctx, "bad")
				repotest.WantCorrupt(t, err, "load", "bad", disk.where("bad"), c.reason)
				// A save over the stored revision, as a renewal or a
				// takeover makes it, and a create.
				_, err = repo.Save(ctx, "bad", repotest.Snap(4), rev)
				repotest.WantCorrupt(t, err, "save", "bad", disk.where("bad"), c.reason)
				_, err = repo.Save(ctx, "bad", repotest.Snap(4), 0)
				repotest.WantCorrupt(t, err, "save", "bad", disk.where("bad"), c.reason)
				if b, ok := repo.(store.BatchSaver); ok {
					revs, errs := b.SaveBatch(ctx, []store.Write{
						{Key: "bad", Snapshot: repotest.Snap(4), Expected: rev},
						{Key: "other", Snapshot: repotest.Snap(2), Expected: otherRev},
					})
					repotest.WantCorrupt(t, errs[0], "save", "bad", disk.where("bad"), c.reason)
					if errs[1] != nil {
						t.Fatalf("the other write of a batch with a corrupt record: %v", errs[1])
					}
					otherRev = revs[1]
				}
				if after := disk.raw(t, "bad"); after != before {
					t.Fatalf("the corrupt record was changed:\n%s\nwas\n%s", after, before)
				}

				if rec, ok, err := repo.Load(ctx, "other"); err != nil || !ok || rec.Revision != otherRev {
					t.Fatalf("Load of another key = %+v, %v, %v; want revision %d", rec, ok, err, otherRev)
				}
				mustSaveRepo(t, repo, "other", repotest.Snap(5), otherRev)
				keys, err := repo.(store.Lister).Keys(ctx)
				if err != nil || !slices.Equal(keys, []string{"bad", "other"}) {
					t.Fatalf("Keys = %q, %v; want both keys", keys, err)
				}
			})
		})
	}
}

// TestAcquireRefusesCorruptHolder: a manager neither reports a garbage
// holder as the live holder nor takes the key over after the TTL: both
// attempts fail with the corrupt record error, and the record stays.
func TestAcquireRefusesCorruptHolder(t *testing.T) {
	forRawKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository, disk rawStore) {
		rev := mustSaveRepo(t, repo, "k", repotest.Snap(3), 0)
		disk.spoil(t, "k", repotest.Snap(3), rev, func(s *storedFields) { s.holder = `{"pid":-7}` })
		before := disk.raw(t, "k")
		m, _ := newManager(t, f.Platform, repo)
		for _, when := range []string{"at once", "after the TTL"} {
			h, err := m.Acquire(t.Context(), "k")
			if h != nil {
				_ = h.Close()
			}
			if !errors.Is(err, store.ErrCorruptRecord) || !strings.Contains(err.Error(), `"bootId": missing`) {
				t.Fatalf("Acquire %s = %v, want the corrupt record error", when, err)
			}
			advance(f.Clock, 2*ttl)
		}
		if after := disk.raw(t, "k"); after != before {
			t.Fatalf("the corrupt record was changed:\n%s\nwas\n%s", after, before)
		}
	})
}

// TestRenewalRefusesCorruptRecord: a holder whose record is spoilt behind
// its back, at the revision it last wrote, fails to renew with the
// corrupt record error rather than writing over it, and is lost at its
// deadline; the record stays as it was.
func TestRenewalRefusesCorruptRecord(t *testing.T) {
	forRawKinds(t, func(t *testing.T, f *platformtest.Fake, repo store.Repository, disk rawStore) {
		m, rec := newManager(t, f.Platform, repo)
		h := mustAcquire(t, m, "k")
		loaded := mustLoad(t, repo, "k")
		disk.spoil(t, "k", loaded.Snapshot, loaded.Revision, func(s *storedFields) { s.holder = `{"host":"h","bootId":"b","pid":-7,"startTime":9}` })
		before := disk.raw(t, "k")
		step(t, f.Clock, hb)
		if e := waitRenewal(t, rec); e.Kind != lease.RenewalFailed || !errors.Is(e.Err, store.ErrCorruptRecord) ||
			!strings.Contains(e.Err.Error(), `"pid": -7 is not a process id`) {
			t.Fatalf("renewal over the spoilt record: %+v, want a failure with the corrupt record error", e)
		}
		settle(t, f.Clock)
		advance(f.Clock, ttl)
		wantLost(t, h)
		if renewed, _ := rec.of(lease.Renewed); len(renewed) != 0 {
			t.Fatalf("renewed over the spoilt record: %v", renewed)
		}
		if after := disk.raw(t, "k"); after != before {
			t.Fatalf("the corrupt record was changed:\n%s\nwas\n%s", after, before)
		}
	})
}

// waitRenewal waits for the first Renewed or RenewalFailed event.
func waitRenewal(t *testing.T, rec *recorder) lease.Event {
	t.Helper()
	var first lease.Event
	rec.waitUntil(t, "a renewal", func() bool {
		for _, e := range rec.all() {
			if e.Kind == lease.Renewed || e.Kind == lease.RenewalFailed {
				first = e
				return true
			}
		}
		return false
	})
	return first
}

// mustSaveRepo saves s over expected, or fails the test.
func mustSaveRepo(t *testing.T, r store.Repository, key string, s store.Snapshot, expected store.Revision) store.Revision {
	t.Helper()
	rev, err := r.Save(t.Context(), key, s, expected)
	if err != nil {
		t.Fatalf("Save(%q over %d): %v", key, expected, err)
	}
	return rev
}
