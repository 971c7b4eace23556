package linearizability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// resource is the store that fenced writes protect. A correct one
// accepts a write only if, at that moment, the lease record holds the
// write's token and is not released: it re-reads the record and applies
// the write under one mutex, which its reads take too. A broken one
// accepts every token.
type resource struct {
	repo   store.Repository
	broken bool

	mu    sync.Mutex
	value map[string]string
}

var errStale = errors.New("stale token")

func (r *resource) write(ctx context.Context, key string, token lease.Token, v string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.broken {
		rec, ok, err := r.repo.Load(ctx, key)
		if err != nil {
			return err
		}
		if !ok || rec.Snapshot.Generation != token || rec.Snapshot.Released {
			return errStale
		}
	}
	r.value[key] = v
	return nil
}

func (r *resource) read(key string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.value[key]
}

// leaseRun runs workers, each with its own manager on one memory
// repository and the real clock, over a few keys: acquire, fenced
// writes, a read, release, and then a write with the released token
// straight to the resource (a holder that did not notice it lost the
// lease). It returns the recorded history.
func leaseRun(t *testing.T, broken bool) History {
	t.Helper()
	repo := lease.NewMemoryRepository()
	res := &resource{repo: repo, broken: broken, value: make(map[string]string)}
	const workers, rounds = 4, 25
	keys := []string{"a", "b", "c"}
	files := make([]*bytes.Buffer, workers)
	var wg sync.WaitGroup
	for w := range workers {
		files[w] = new(bytes.Buffer)
		m, err := lease.NewManager(lease.Config{TTL: time.Minute, Heartbeat: 10 * time.Second, Repository: repo})
		if err != nil {
			t.Fatal(err)
		}
		rec := NewRecorder(files[w], w, platform.RealClock())
		wg.Go(func() {
			defer m.Close()
			for i := range rounds {
				if err := worker(rec, m, res, keys[(w+i)%len(keys)], fmt.Sprintf("w%d.%d", w, i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	readers := make([]io.Reader, len(files))
	for i, f := range files {
		readers[i] = f
	}
	h, err := ReadHistory(readers...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// worker does one round on key, recording every operation.
func worker(rec *Recorder, m *lease.Manager, res *resource, key, tag string) error {
	ctx := context.Background()
	p, err := rec.Begin(key, Acquire, none)
	if err != nil {
		return err
	}
	l, err := m.Acquire(ctx, key)
	switch {
	case errors.Is(err, lease.ErrHeld):
		return p.End(refused)
	case err != nil:
		return p.End(unknown)
	}
	token := l.Token()
	if err := p.End(gen(uint64(token))); err != nil {
		return err
	}
	for j := range 2 {
		v := fmt.Sprintf("%s.%d", tag, j)
		if err := record(rec, key, Write, wr(uint64(token), v), func() Output {
			return writeOutput(l.RunFenced(ctx, func(ctx context.Context, tk lease.Token) error {
				return res.write(ctx, key, tk, v)
			}))
		}); err != nil {
			return err
		}
	}
	if err := record(rec, key, Read, none, func() Output { return val(res.read(key)) }); err != nil {
		return err
	}
	if err := record(rec, key, Release, tok(uint64(token)), func() Output {
		if l.Close() != nil {
			return unknown
		}
		return done
	}); err != nil {
		return err
	}
	return record(rec, key, Write, wr(uint64(token), tag+".late"), func() Output {
		return writeOutput(res.write(ctx, key, token, tag+".late"))
	})
}

// record records one operation around do.
func record(rec *Recorder, key string, k Kind, in Input, do func() Output) error {
	p, err := rec.Begin(key, k, in)
	if err != nil {
		return err
	}
	return p.End(do())
}

// writeOutput classifies a fenced write's error: refused when the token
// was stale or the lease lost, unknown on any other failure.
func writeOutput(err error) Output {
	switch {
	case err == nil:
		return ok
	case errors.Is(err, errStale), errors.Is(err, lease.ErrLost), errors.Is(err, lease.ErrReleased):
		return refused
	}
	return unknown
}

// TestLeaseRunLinearizable checks a real run against the lease package.
func TestLeaseRunLinearizable(t *testing.T) {
	h := leaseRun(t, false)
	r := Check(h, testTimeout)
	if r.Verdict != Linearizable {
		t.Fatalf("verdict %v\n%s", r.Verdict, r.ShortestFailing())
	}
	acquired, writes := 0, 0
	for _, e := range h.Events {
		switch {
		case e.Kind == Acquire && e.Output.Status == OK:
			acquired++
		case e.Kind == Write && e.Output.Status == OK:
			writes++
		}
	}
	t.Logf("%d operations, %d acquisitions, %d accepted writes", r.Ops, acquired, writes)
	if acquired == 0 || writes == 0 || r.Keys != 3 {
		t.Fatalf("vacuous run: %d acquisitions, %d accepted writes, %d keys", acquired, writes, r.Keys)
	}
	path := filepath.Join(t.TempDir(), "run.html")
	if err := r.WriteHTML(path); err != nil {
		t.Fatal(err)
	}
	assertHTML(t, path)
}

// TestLeaseRunBrokenResource is the negative control: the same run with
// a resource that accepts stale tokens is a violation, named and drawn.
func TestLeaseRunBrokenResource(t *testing.T) {
	r := Check(leaseRun(t, true), testTimeout)
	if r.Verdict != Violation {
		t.Fatalf("verdict %v, want a violation", r.Verdict)
	}
	if len(r.Failing) == 0 || r.FailingKey != r.Failing[0].Key || r.Failing[0].Object != "lease" {
		t.Fatalf("failing %v, key %q", r.Failing, r.FailingKey)
	}
	text := r.ShortestFailing()
	if !strings.Contains(text, ".late") || !strings.Contains(text, fmt.Sprintf("%q", r.FailingKey)) {
		t.Errorf("ShortestFailing does not show the late write of key %q:\n%s", r.FailingKey, text)
	}
	path := filepath.Join(t.TempDir(), "violation.html")
	if err := r.WriteHTML(path); err != nil {
		t.Fatal(err)
	}
	assertHTML(t, path)
}

func assertHTML(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("<html")) || len(b) < 1000 {
		t.Fatalf("%s is not a visualisation (%d bytes)", path, len(b))
	}
}
