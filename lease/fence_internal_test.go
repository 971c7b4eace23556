package lease

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivus/collab/lease/store"
)

func TestKeyPath(t *testing.T) {
	long := strings.Repeat("é", 128) // 256 bytes, 768 characters encoded
	enc := strings.Repeat("_c3_a9", 128)
	tests := []struct {
		key  string
		want string
	}{
		{"task-42", "task-42.json"},
		{"task:42", "task_3a42.json"},
		{"A/../b", "_41_2f_2e_2e_2fb.json"},
		{"..", "_2e_2e.json"},
		{"_", "_5f.json"},
		{"ü", "_c3_bc.json"},
		{strings.Repeat("k", 200), strings.Repeat("k", 200) + ".json"},
		{strings.Repeat("k", 201), strings.Repeat("k", 200) + "/k.json"},
		{long, enc[:200] + "/" + enc[200:400] + "/" + enc[400:600] + "/" + enc[600:] + ".json"},
	}
	for _, tt := range tests {
		got, nested := keyPath("", tt.key, recordSuffix)
		if filepath.ToSlash(got) != tt.want || nested != strings.Contains(tt.want, "/") {
			t.Errorf("keyPath(%q) = %q, nested %v; want %q", tt.key, got, nested, tt.want)
		}
		for _, part := range strings.Split(tt.want, "/") {
			if len(part) > segmentLen+len(recordSuffix) || strings.HasPrefix(part, ".") {
				t.Errorf("keyPath(%q) has component %q", tt.key, part)
			}
		}
		if key, err := decodeKeyPath(got, recordSuffix); err != nil || key != tt.key {
			t.Errorf("decodeKeyPath(%q) = %q, %v; want %q", got, key, err, tt.key)
		}
	}
}

func TestDecodeKeyPathRejects(t *testing.T) {
	for _, rel := range []string{
		"task.json.tmp", // wrong suffix
		"Task.json",     // not canonical: upper case stands for itself nowhere
		"_61.json",      // not canonical: 'a' is written plain
		"_2.json",       // escape cut short
		"_zz.json",      // bad escape
		"_2F.json",      // upper-case hex
		".json",         // empty key
		"_00.json",      // NUL
		"_ff.json",      // invalid UTF-8
		"kk/k.json",     // a short directory
		strings.Repeat("k", 201) + ".json",
	} {
		if key, err := decodeKeyPath(rel, recordSuffix); err == nil {
			t.Errorf("decodeKeyPath(%q) = %q, want an error", rel, key)
		}
	}
}

// FuzzKeyPath: every valid key has one file name, within the length limit
// of a name, free of dots at the start, that decodes back to the key.
func FuzzKeyPath(f *testing.F) {
	for _, k := range []string{"task:42", "a/../b", "..", "ü", strings.Repeat("é", 128), strings.Repeat("/", 256)} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if store.ValidateKey(key) != nil {
			return
		}
		rel, _ := keyPath("", key, fenceSuffix)
		for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
			if part == "" || part[0] == '.' || len(part) > segmentLen+len(fenceSuffix) {
				t.Fatalf("keyPath(%q) = %q: bad component %q", key, rel, part)
			}
		}
		got, err := decodeKeyPath(rel, fenceSuffix)
		if err != nil || got != key {
			t.Fatalf("decodeKeyPath(keyPath(%q)) = %q, %v", key, got, err)
		}
	})
}

// TestKeyLocksForgetFreeKeys: a key's entry lives only while it is held,
// waited for or not.
func TestKeyLocksForgetFreeKeys(t *testing.T) {
	var l keyLocks
	ctx := t.Context()
	for i := range 100 {
		unlock, err := l.Lock(ctx, strings.Repeat("k", i+1))
		if err != nil {
			t.Fatal(err)
		}
		unlock()
	}
	if n := l.Size(); n != 0 {
		t.Fatalf("%d entries after every lock was released", n)
	}
	unlock, err := l.Lock(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	waiterCtx, cancel := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() {
		_, err := l.Lock(waiterCtx, "held")
		waited <- err
	}()
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter = %v", err)
	}
	if n := l.Size(); n != 1 {
		t.Fatalf("%d entries with one key held, want 1", n)
	}
	unlock()
	if n := l.Size(); n != 0 {
		t.Fatalf("%d entries after the last unlock", n)
	}
}

// TestKeyLocksHandOver: every waiter gets the lock in turn; none is lost
// when others give up.
func TestKeyLocksHandOver(t *testing.T) {
	var l keyLocks
	ctx := t.Context()
	unlock, err := l.Lock(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 10
	var wg sync.WaitGroup
	got := make(chan int, waiters)
	giveUp, cancel := context.WithCancel(ctx)
	for i := range waiters {
		wctx := ctx
		if i%2 == 1 {
			wctx = giveUp
		}
		wg.Go(func() {
			u, err := l.Lock(wctx, "k")
			if err != nil {
				return
			}
			got <- i
			u()
		})
	}
	cancel()
	unlock()
	wg.Wait()
	close(got)
	n := 0
	for i := range got {
		if i%2 == 0 {
			n++
		}
	}
	if n != waiters/2 {
		t.Fatalf("%d of %d patient waiters got the lock", n, waiters/2)
	}
	if s := l.Size(); s != 0 {
		t.Fatalf("%d entries left", s)
	}
}

// TestMemoryFenceForgetsKeys: the memory repository's fences keep no
// entry for a free key.
func TestMemoryFenceForgetsKeys(t *testing.T) {
	r := NewMemoryRepository()
	for i := range 50 {
		unlock, err := r.Fence(t.Context(), strings.Repeat("x", i+1))
		if err != nil {
			t.Fatal(err)
		}
		unlock()
		unlock()
	}
	if n := r.fences.Size(); n != 0 {
		t.Fatalf("%d fence entries after every fence was released", n)
	}
}

func TestJitter(t *testing.T) {
	for _, d := range []time.Duration{minBackoff, 7 * time.Millisecond, maxBackoff} {
		for range 100 {
			if j := jitter(d); j < d/2 || j > d {
				t.Fatalf("jitter(%v) = %v, want within [%v, %v]", d, j, d/2, d)
			}
		}
	}
}
