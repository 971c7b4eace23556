package linearizability

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivus/collab/platform"
)

// TestRecorderRoundTripConcurrent records from many goroutines of one
// process and reads the file back: every operation once, with its call
// before its return, and the ones left pending open.
func TestRecorderRoundTripConcurrent(t *testing.T) {
	var buf bytes.Buffer // the recorder alone must make concurrent use safe
	r := NewRecorder(&buf, 7, platform.RealClock())
	const goroutines, each = 8, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				key := fmt.Sprintf("k%d", g)
				p, err := r.Begin(key, Write, wr(uint64(i+1), fmt.Sprintf("g%d-%d", g, i)))
				if err != nil {
					t.Error(err)
					return
				}
				if i == each-1 {
					continue // left open, as by a crash
				}
				if err := p.End(ok); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	h, err := ReadHistory(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Events) != goroutines*each {
		t.Fatalf("%d events, want %d", len(h.Events), goroutines*each)
	}
	seen := make(map[string]bool)
	opens := 0
	for _, e := range h.Events {
		if e.Process != 7 || e.Kind != Write || seen[e.Input.Value] {
			t.Fatalf("bad or repeated event %+v", e)
		}
		seen[e.Input.Value] = true
		if e.Open {
			opens++
			continue
		}
		if e.Return < e.Call || e.Output != ok {
			t.Errorf("event %+v", e)
		}
	}
	if opens != goroutines {
		t.Errorf("%d open events, want %d", opens, goroutines)
	}
}

// TestRecorderEndOnce checks that only the first End of an operation
// writes.
func TestRecorderEndOnce(t *testing.T) {
	var buf bytes.Buffer
	r := NewRecorder(&buf, 1, platform.RealClock())
	p, err := r.Begin("k", Acquire, none)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []Output{gen(1), refused} {
		if err := p.End(out); err != nil {
			t.Fatal(err)
		}
	}
	h, err := ReadHistory(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Events) != 1 || h.Events[0].Output != gen(1) {
		t.Fatalf("events %+v", h.Events)
	}
}

// TestRecorderInstant: an instant operation is one Write of its call and
// return, read back as one done operation that returns after its call.
func TestRecorderInstant(t *testing.T) {
	w := &countingWriter{}
	r := NewRecorder(w, 1, platform.RealClock())
	if err := r.Instant("k", Enter, none, ok); err != nil {
		t.Fatal(err)
	}
	if w.writes != 1 {
		t.Fatalf("%d writes, want 1", w.writes)
	}
	h, err := ReadHistory(&w.buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Events) != 1 || h.Events[0].Kind != Enter || h.Events[0].Open || h.Events[0].Return <= h.Events[0].Call {
		t.Fatalf("events %+v, want one done Enter", h.Events)
	}
}

type countingWriter struct {
	buf    bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.buf.Write(p)
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, io.ErrShortWrite
	}
	f.n--
	return len(p), nil
}

// TestRecorderWriteError checks that a failed call line is reported
// (the caller must not invoke the operation) and sticks.
func TestRecorderWriteError(t *testing.T) {
	r := NewRecorder(&failingWriter{n: 1}, 3, platform.RealClock())
	p, err := r.Begin("k", Lock, none)
	if err != nil {
		t.Fatal(err)
	}
	var rerr *RecordError
	if err := p.End(ok); !errors.As(err, &rerr) || rerr.Process != 3 || !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("End = %v, want a *RecordError of process 3", err)
	}
	if _, err := r.Begin("k", Unlock, none); !errors.As(err, &rerr) {
		t.Fatalf("Begin after a failure = %v, want the *RecordError", err)
	}
}

// namedReader gives a reader a file name, as *os.File has.
type namedReader struct {
	io.Reader
	name string
}

func (n namedReader) Name() string { return n.name }

// TestReadHistoryMerge merges the files of three processes and a
// supervisor's crash record, in file order that is not time order.
func TestReadHistoryMerge(t *testing.T) {
	clock := &stepClock{}
	files := make([]*bytes.Buffer, 4)
	recs := make([]*Recorder, 4)
	for i := range files {
		files[i] = new(bytes.Buffer)
		recs[i] = NewRecorder(files[i], i, clock)
	}
	do := func(r *Recorder, key string, k Kind, in Input, out Output) {
		t.Helper()
		p, err := r.Begin(key, k, in)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.End(out); err != nil {
			t.Fatal(err)
		}
	}
	do(recs[0], "l", Lock, none, ok)
	do(recs[1], "l", Lock, none, refused)
	if _, err := recs[2].Begin("k", Acquire, none); err != nil { // process 2 crashes here
		t.Fatal(err)
	}
	c, err := recs[3].BeginCrash(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.End(ok); err != nil {
		t.Fatal(err)
	}
	do(recs[1], "l", Lock, none, ok)
	do(recs[1], "k", Acquire, none, gen(2))

	h, err := ReadHistory(files[3], files[1], files[2], files[0])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range h.Events {
		got = append(got, e.String())
	}
	want := []string{
		"p0 [1, 2] lock -> ok",
		"p1 [3, 4] lock -> refused",
		"p2 [5, open] acquire -> open (crashed)",
		"p0 [6, 7] crash -> ok",
		"p1 [8, 9] lock -> ok",
		"p1 [10, 11] acquire -> gen 2",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("merged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r := Check(h, testTimeout); r.Verdict != Linearizable {
		t.Fatalf("verdict %v\n%s", r.Verdict, r.ShortestFailing())
	}
}

// stepClock's monotonic reading goes up by one at every reading.
type stepClock struct {
	platform.Clock
	mu sync.Mutex
	n  int64
}

func (c *stepClock) Monotonic() (d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return time.Duration(c.n)
}

// TestReadHistoryGarbage checks that a line ReadHistory cannot use is a
// *LineError naming file and line, and that a torn final line is
// skipped.
func TestReadHistoryGarbage(t *testing.T) {
	call := `{"ev":"call","p":1,"id":1,"at":5,"key":"k","kind":"acquire","in":{}}`
	ret := `{"ev":"ret","p":1,"id":1,"at":9,"out":{"status":"ok","gen":1}}`
	tests := []struct {
		name, text string
		line       int // 0: no error
		events     int
		torn       int
	}{
		{"good", call + "\n" + ret + "\n", 0, 1, 0},
		{"blank lines", "\n" + call + "\n\n" + ret + "\n", 0, 1, 0},
		{"torn return", call + "\n" + ret[:20], 0, 1, 1},
		{"torn call", call[:30], 0, 0, 1},
		{"unterminated but whole", call + "\n" + ret, 0, 1, 0},
		{"not json", call + "\nhello\n" + ret + "\n", 2, 0, 0},
		{"unknown field", `{"ev":"call","p":1,"id":1,"at":5,"kind":"read","x":1}` + "\n", 1, 0, 0},
		{"unknown kind", `{"ev":"call","p":1,"id":1,"at":5,"kind":"steal"}` + "\n", 1, 0, 0},
		{"unknown status", call + "\n" + strings.Replace(ret, `"ok"`, `"maybe"`, 1) + "\n", 2, 0, 0},
		{"unknown ev", `{"ev":"oops","p":1,"id":1,"at":5}` + "\n", 1, 0, 0},
		{"return before call", ret + "\n" + call + "\n", 1, 0, 0},
		{"second call", call + "\n" + call + "\n", 2, 0, 0},
		{"second return", call + "\n" + ret + "\n" + ret + "\n", 3, 0, 0},
		{"return earlier than call", call + "\n" + strings.Replace(ret, `"at":9`, `"at":4`, 1) + "\n", 2, 0, 0},
		{"crash without victim", `{"ev":"call","p":1,"id":1,"at":5,"kind":"crash"}` + "\n", 1, 0, 0},
		{"victim of a read", `{"ev":"call","p":1,"id":1,"at":5,"kind":"read","victim":2}` + "\n", 1, 0, 0},
		{"two objects", call + " {}\n", 1, 0, 0},
		{"stray brace", call + "}\n", 1, 0, 0},
		{"stray bracket", call + "]\n", 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ReadHistory(strings.NewReader(""), namedReader{strings.NewReader(tt.text), "p1.jsonl"})
			if tt.line == 0 {
				if err != nil || len(h.Events) != tt.events || h.Torn != tt.torn {
					t.Fatalf("ReadHistory = %d events, %d torn, %v; want %d, %d", len(h.Events), h.Torn, err, tt.events, tt.torn)
				}
				return
			}
			var le *LineError
			if !errors.As(err, &le) || le.File != "p1.jsonl" || le.Line != tt.line {
				t.Fatalf("ReadHistory error %v, want a *LineError at p1.jsonl:%d", err, tt.line)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("p1.jsonl:%d:", tt.line)) {
				t.Errorf("message %q does not name the line", err)
			}
		})
	}
	_, err := ReadHistory(strings.NewReader("junk\n"))
	var le *LineError
	if !errors.As(err, &le) || le.File != "file 1" {
		t.Fatalf("unnamed reader: %v", err)
	}
}
