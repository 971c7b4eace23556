package file_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/lease/file"
	"github.com/rivus/collab/lease/internal/repotest"
	"github.com/rivus/collab/lease/leasetest"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func openRepo(t testing.TB, p *platform.Platform, dir string) *file.Repository {
	t.Helper()
	r, err := file.Open(p, dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRepository(t *testing.T) {
	leasetest.RunShared(t, func(t *testing.T, dir string) store.Repository { return openRepo(t, platform.OS(), dir) })
}

// TestLayout: the files are where the package documentation
// says, and a save leaves no temporary file behind.
func TestLayout(t *testing.T) {
	dir := t.TempDir()
	r := openRepo(t, platform.OS(), dir)
	s := store.Snapshot{Generation: 3, Holder: platform.Identity{Host: "h", BootID: "b", PID: 1, StartTime: 2}, RenewedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), TTL: time.Minute}
	if _, err := r.Save(t.Context(), "task:42", s, 0); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("k", 201)
	if _, err := r.Save(t.Context(), long, s, 0); err != nil {
		t.Fatal(err)
	}
	unlock, err := r.Fence(t.Context(), "task:42")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if got, want := platformtest.DirNames(t, dir), []string{".fences", ".locks", strings.Repeat("k", 200), "task_3a42.json"}; !slices.Equal(got, want) {
		t.Errorf("%s holds %q, want %q", dir, got, want)
	}
	if got, want := platformtest.DirNames(t, filepath.Join(dir, strings.Repeat("k", 200))), []string{"k.json"}; !slices.Equal(got, want) {
		t.Errorf("the long key's directory holds %q, want %q", got, want)
	}
	for _, f := range []string{".locks/task_3a42.lock", ".fences/task_3a42.fence", ".locks/" + strings.Repeat("k", 200) + "/k.lock"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("lock file: %v", err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "task_3a42.json"))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{
  "format": 1,
  "key": "task:42",
  "revision": 1,
  "lease": {
    "generation": 3,
    "holder": {
      "host": "h",
      "bootId": "b",
      "pid": 1,
      "startTime": 2
    },
    "released": false,
    "renewedAt": "2026-01-01T00:00:00Z",
    "ttl": "1m0s"
  }
}
`
	if string(data) != want {
		t.Errorf("record file =\n%s\nwant\n%s", data, want)
	}
}

// validRecord is a record file of key "task:42" at revision 4.
const validRecord = `{"format":1,"key":"task:42","revision":4,"lease":{"generation":2,"holder":{"host":"h","bootId":"b","pid":1,"startTime":2},"released":false,"renewedAt":"2026-01-01T00:00:00Z","ttl":"1m0s"}}`

// TestCorruptRecord: a record file that cannot be read
// fails its key only, with an error naming the file, and stays as it is.
func TestCorruptRecord(t *testing.T) {
	tests := []struct {
		name, content, reason string
	}{
		{"not JSON", "garbage", "not a JSON record"},
		{"empty", "", "not a JSON record"},
		{"truncated", validRecord[:40], "not a JSON record"},
		{"trailing data", validRecord + "{}", "trailing data"},
		{"trailing brace", validRecord + "}", "trailing data"},
		{"trailing bracket", validRecord + "]", "trailing data"},
		{"another key", strings.Replace(validRecord, `"task:42"`, `"task:43"`, 1), `holds key "task:43"`},
		{"unknown format", strings.Replace(validRecord, `"format":1`, `"format":2`, 1), "format 2 is not supported"},
		{"no format", strings.Replace(validRecord, `"format":1,`, ``, 1), "format 0 is not supported"},
		{"no revision", strings.Replace(validRecord, `"revision":4,`, ``, 1), "revision missing"},
		{"negative revision", strings.Replace(validRecord, `"revision":4`, `"revision":-4`, 1), "not a JSON record"},
		{"no lease", strings.Replace(validRecord, `,"lease":`, `,"other":`, 1), "lease missing"},
		{"bad ttl", strings.Replace(validRecord, `"1m0s"`, `"a minute"`, 1), "ttl"},
		{"bad time", strings.Replace(validRecord, `"2026-01-01T00:00:00Z"`, `"Monday"`, 1), "not a JSON record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			r := openRepo(t, platform.OS(), dir)
			path := filepath.Join(dir, "task_3a42.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := r.Load(t.Context(), "task:42")
			repotest.WantCorrupt(t, err, "load", "task:42", path, tt.reason)
			_, err = r.Save(t.Context(), "task:42", repotest.Snap(9), 4)
			repotest.WantCorrupt(t, err, "save", "task:42", path, tt.reason)
			if data, err := os.ReadFile(path); err != nil || string(data) != tt.content {
				t.Fatalf("the corrupt file now holds %q, %v; want it left as it was", data, err)
			}
			rev, err := r.Save(t.Context(), "other", repotest.Snap(1), 0)
			if err != nil {
				t.Fatalf("another key beside a corrupt one: %v", err)
			}
			if rec, ok, err := r.Load(t.Context(), "other"); err != nil || !ok || rec.Revision != rev {
				t.Fatalf("Load(other) = %+v, %v, %v", rec, ok, err)
			}
		})
	}
}

// TestRecordCorruptValues: a record file whose snapshot holds values
// no lease record can names the JSON field.
func TestRecordCorruptValues(t *testing.T) {
	dir := t.TempDir()
	r := openRepo(t, platform.OS(), dir)
	path := filepath.Join(dir, "task_3a42.json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(validRecord), &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc["lease"].(map[string]any), "holder")
	data, _ := json.Marshal(doc)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := r.Load(t.Context(), "task:42")
	repotest.WantCorrupt(t, err, "load", "task:42", path, "lease.holder: missing")
}

// TestReadsValidRecord: a record written by another writer
// of the format is read, and the next save continues its revisions.
func TestReadsValidRecord(t *testing.T) {
	dir := t.TempDir()
	r := openRepo(t, platform.OS(), dir)
	if err := os.WriteFile(filepath.Join(dir, "task_3a42.json"), []byte(validRecord), 0o600); err != nil {
		t.Fatal(err)
	}
	rec, ok, err := r.Load(t.Context(), "task:42")
	if err != nil || !ok || rec.Revision != 4 || rec.Snapshot.Generation != 2 || rec.Snapshot.TTL != time.Minute {
		t.Fatalf("Load = %+v, %v, %v", rec, ok, err)
	}
	if rev, err := r.Save(t.Context(), "task:42", rec.Snapshot, 4); err != nil || rev != 5 {
		t.Fatalf("Save over revision 4 = %d, %v; want 5", rev, err)
	}
}

// TestFaults: a failing file operation is a
// *RepositoryError, changes nothing, and leaves no lock held.
func TestFaults(t *testing.T) {
	long := strings.Repeat("k", 300/3) + strings.Repeat("/", 100)
	tests := []struct {
		name  string
		fault func(platformtest.Op, string) error
		key   string
		do    func(t *testing.T, r store.Repository, key string, rev store.Revision) error
		op    string
	}{
		{"load read", repotest.FaultOn(platformtest.OpReadOwnFile, ".json"), "k", load, "load"},
		{"save read", repotest.FaultOn(platformtest.OpReadOwnFile, ".json"), "k", save, "save"},
		{"save write", repotest.FaultOn(platformtest.OpWriteFileAtomic, ".json"), "k", save, "save"},
		{"save lock", repotest.FaultOn(platformtest.OpTryLock, ".lock"), "k", save, "save"},
		{"save lock directory", repotest.FaultOn(platformtest.OpMkdirAll, ""), long, save, "save"},
		{"fence lock", repotest.FaultOn(platformtest.OpTryLock, ".fence"), "k", fence, "fence"},
		{"fence directory", repotest.FaultOn(platformtest.OpMkdirAll, ""), long, fence, "fence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := platformtest.New(t)
			r := openRepo(t, f.Platform, f.Dir)
			rev, err := r.Save(t.Context(), tt.key, repotest.Snap(1), 0)
			if err != nil {
				t.Fatal(err)
			}
			f.FS.SetFault(tt.fault)
			repotest.WantRepositoryError(t, tt.do(t, r, tt.key, rev), tt.op, tt.key)
			f.FS.SetFault(nil)
			if rec, ok, err := r.Load(t.Context(), tt.key); err != nil || !ok || rec.Revision != rev || rec.Snapshot.Generation != 1 {
				t.Fatalf("after the fault, Load = %+v, %v, %v; want the record unchanged", rec, ok, err)
			}
			if err := tt.do(t, r, tt.key, rev); err != nil {
				t.Fatalf("after the fault: %v", err)
			}
		})
	}
}

// The operations of TestFaults and its SQLite counterpart.
func load(t *testing.T, r store.Repository, key string, _ store.Revision) error {
	_, _, err := r.Load(t.Context(), key)
	return err
}

func save(t *testing.T, r store.Repository, key string, rev store.Revision) error {
	_, err := r.Save(t.Context(), key, repotest.Snap(1), rev)
	return err
}

func fence(t *testing.T, r store.Repository, key string, _ store.Revision) error {
	return repotest.Fence(t, r, key)
}

func TestOpenFails(t *testing.T) {
	f := platformtest.New(t)
	f.FS.SetFault(repotest.FaultOn(platformtest.OpMkdirAll, ".fences"))
	_, err := file.Open(f.Platform, f.Dir)
	repotest.WantRepositoryError(t, err, "open", "")
	var re *store.RepositoryError
	if _, err := file.Open(&platform.Platform{}, f.Dir); !errors.As(err, &re) {
		t.Fatalf("Open on a platform without a file system = %v, want a *RepositoryError", err)
	}
}

// TestOpenNilPlatform: a nil platform is the operating system's.
func TestOpenNilPlatform(t *testing.T) {
	dir := t.TempDir()
	r, err := file.Open(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Save(t.Context(), "k", repotest.Snap(1), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "k.json")); err != nil {
		t.Fatalf("the record is not in %s: %v", dir, err)
	}
}

// FuzzRecord: whatever a record file holds, Load and Save return a
// record or a *CorruptRecordError, and never change a file they cannot
// read.
func FuzzRecord(f *testing.F) {
	f.Add([]byte(validRecord))
	f.Add([]byte(`{"format":1,"key":"task:42","revision":1,"lease":null}`))
	f.Add([]byte(`{"format":1,"key":"task:42","revision":18446744073709551615,"lease":{"ttl":"-5s"}}`))
	f.Add([]byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, content []byte) {
		dir := t.TempDir()
		r := openRepo(t, platform.OS(), dir)
		path := filepath.Join(dir, "task_3a42.json")
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		rec, ok, err := r.Load(t.Context(), "task:42")
		if err != nil {
			if !errors.Is(err, store.ErrCorruptRecord) {
				t.Fatalf("Load = %v, want a corrupt record", err)
			}
			if _, err := r.Save(t.Context(), "task:42", store.Snapshot{Generation: 1, Holder: repotest.Sample.Holder, TTL: time.Second}, 0); !errors.Is(err, store.ErrCorruptRecord) {
				t.Fatalf("Save over a corrupt record = %v", err)
			}
			if data, _ := os.ReadFile(path); !bytes.Equal(data, content) {
				t.Fatal("a corrupt record file was changed")
			}
			return
		}
		if !ok || rec.Revision == 0 {
			t.Fatalf("Load of an existing file = %+v, %v", rec, ok)
		}
		if rec.Revision == ^store.Revision(0) {
			return // the next revision would wrap; no writer gets there
		}
		rev, err := r.Save(t.Context(), "task:42", rec.Snapshot, rec.Revision)
		if err != nil || rev != rec.Revision+1 {
			t.Fatalf("Save over a readable record = %d, %v", rev, err)
		}
		again, _, err := r.Load(t.Context(), "task:42")
		if err != nil || again.Revision != rev {
			t.Fatalf("Load after Save = %+v, %v", again, err)
		}
		if a, b := mustJSON(t, again.Snapshot), mustJSON(t, rec.Snapshot); a != b {
			t.Fatalf("snapshot changed in a round trip: %s, was %s", a, b)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func BenchmarkSave(b *testing.B) {
	r := openRepo(b, platform.OS(), b.TempDir())
	s := repotest.Sample
	var rev store.Revision
	for b.Loop() {
		var err error
		if rev, err = r.Save(b.Context(), "task:42", s, rev); err != nil {
			b.Fatal(err)
		}
	}
}
