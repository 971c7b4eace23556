package torture

import (
	"bytes"
	"testing"
	"time"

	lz "github.com/rivus/collab/linearizability"
	"github.com/rivus/collab/platform"
)

// handClock is a clock whose monotonic reading the test sets.
type handClock struct {
	platform.Clock
	at time.Duration
}

func (c *handClock) Monotonic() time.Duration { return c.at }

// staleHistory records, in one file a process, a takeover before the
// TTL of key k: p1 acquires it and writes, p2 acquires it over p1 (an
// early takeover), and p1 goes on writing with its token: during p2's
// acquisition (which may come first), then, if stale, after it returned
// (which no linearization allows). p1 then has a write refused, one of
// unknown outcome and one cut by a crash; p3 is refused the lease; p2
// writes on k and p1 on another key, j, which p2 held before.
func staleHistory(t *testing.T, stale bool) [][]byte {
	t.Helper()
	clock := &handClock{Clock: platform.RealClock()}
	files := make([]*bytes.Buffer, 4)
	recs := make([]*lz.Recorder, 4)
	for p := 1; p < 4; p++ {
		files[p] = new(bytes.Buffer)
		recs[p] = lz.NewRecorder(files[p], p, clock)
	}
	op := func(p int, call, ret time.Duration, key string, k lz.Kind, in lz.Input, out lz.Output) {
		t.Helper()
		clock.at = call
		pend, err := recs[p].Begin(key, k, in)
		if err != nil {
			t.Fatal(err)
		}
		if ret == 0 { // open: its process was killed
			return
		}
		clock.at = ret
		if err := pend.End(out); err != nil {
			t.Fatal(err)
		}
	}
	ok := lz.Output{Status: lz.OK}
	op(2, 1, 2, "j", lz.Acquire, lz.Input{}, lz.Output{Status: lz.OK, Gen: 1})
	op(2, 3, 4, "j", lz.Release, lz.Input{Token: 1}, lz.Output{Status: lz.Done})
	op(1, 10, 20, "k", lz.Acquire, lz.Input{}, lz.Output{Status: lz.OK, Gen: 1})
	op(1, 30, 40, "k", lz.Write, lz.Input{Token: 1, Value: "a"}, ok)
	op(2, 50, 60, "k", lz.Acquire, lz.Input{}, lz.Output{Status: lz.OK, Gen: 2})
	op(1, 55, 62, "k", lz.Write, lz.Input{Token: 1, Value: "b"}, ok) // during the takeover
	op(3, 63, 64, "k", lz.Acquire, lz.Input{}, lz.Output{Status: lz.Refused})
	if stale {
		op(1, 70, 80, "k", lz.Write, lz.Input{Token: 1, Value: "c"}, ok)
	}
	op(1, 90, 95, "k", lz.Write, lz.Input{Token: 1, Value: "d"}, lz.Output{Status: lz.Refused})
	op(1, 100, 105, "k", lz.Write, lz.Input{Token: 1, Value: "e"}, lz.Output{Status: lz.Unknown})
	op(2, 106, 107, "k", lz.Write, lz.Input{Token: 2, Value: "f"}, ok)
	op(1, 110, 111, "j", lz.Acquire, lz.Input{}, lz.Output{Status: lz.OK, Gen: 2})
	op(1, 112, 113, "j", lz.Write, lz.Input{Token: 2, Value: "g"}, ok)
	op(1, 120, 0, "k", lz.Write, lz.Input{Token: 1, Value: "h"}, lz.Output{})
	return [][]byte{files[1].Bytes(), files[2].Bytes(), files[3].Bytes()}
}

// TestStaleTally: a write that returned OK with a token below that of
// an acquisition returned before its call is counted, once, whatever
// order the files are read in and however their lines are cut into
// reads; nothing else is. The check agrees: a history with a stale
// write is a violation, the same without it is linearizable.
func TestStaleTally(t *testing.T) {
	for _, stale := range []bool{false, true} {
		files := staleHistory(t, stale)
		want, verdict := 0, lz.Linearizable
		if stale {
			want, verdict = 1, lz.Violation
		}
		for name, feed := range map[string]func(s *staleTally){
			"in file order": func(s *staleTally) {
				for _, f := range files {
					s.add(f)
				}
			},
			"in reverse order": func(s *staleTally) {
				for i := len(files) - 1; i >= 0; i-- {
					s.add(files[i])
				}
			},
			"a line at a time, in turn": func(s *staleTally) {
				lines := make([][][]byte, len(files))
				for i, f := range files {
					lines[i] = bytes.SplitAfter(f, []byte("\n"))
				}
				for n := 0; ; n++ {
					more := false
					for _, l := range lines {
						if n < len(l) {
							s.add(l[n])
							more = true
						}
					}
					if !more {
						break
					}
				}
			},
		} {
			s := newStaleTally()
			feed(s)
			if s.n != want {
				t.Errorf("stale %v, read %s: %d stale writes, want %d", stale, name, s.n, want)
			}
		}
		var readers []*bytes.Reader
		for _, f := range files {
			readers = append(readers, bytes.NewReader(f))
		}
		h, err := lz.ReadHistory(readers[0], readers[1], readers[2])
		if err != nil {
			t.Fatal(err)
		}
		if got := lz.Check(h, 10*time.Second).Verdict; got != verdict {
			t.Errorf("stale %v: verdict %v, want %v", stale, got, verdict)
		}
	}
}
