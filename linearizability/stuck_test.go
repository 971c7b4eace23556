package linearizability

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStuckNamesUnplacedOperations: after a violation the report says
// where porcupine's search stopped: the failing object, how many of its
// operations it placed, the last and the state they leave, and the
// operations none of which could come next, with process, input,
// output and times.
func TestStuckNamesUnplacedOperations(t *testing.T) {
	h := hist(
		op(0, "k", Acquire, none, gen(1), 100, 110),
		op(1, "k", Acquire, none, refused, 112, 114),
		op(1, "k", Acquire, none, gen(2), 120, 130),
		op(0, "k", Write, wr(1, "x"), ok, 140, 150), // stale: gen 2 holds the record
		op(2, "k", Read, none, val("x"), 145, 160),
		op(1, "fine", Acquire, none, gen(1), 0, 10),
	)
	r := check(t, h)
	s := r.Stuck
	if r.Verdict != Violation || s == nil {
		t.Fatalf("verdict %v, Stuck %v", r.Verdict, s)
	}
	if s.Object != (ObjectID{"lease", "k"}) || s.Placed != 3 || s.Total != 5 || s.CutOff ||
		s.Last != h.Events[3] || s.After != `gen 2 held, value ""` {
		t.Errorf("Stuck %+v", s)
	}
	if len(s.Next) != 2 || s.Next[0] != h.Events[4] || s.Next[1] != h.Events[5] {
		t.Errorf("Next = %v; want the stale write and the read of its value", s.Next)
	}
	want := `lease "k": porcupine placed 3 of the 5 operations it checked, the last p1 acquire -> gen 2, leaving gen 2 held, value ""; it could place none of these next:
  p0 write(token 1, "x") -> ok; called +40ns, returned +50ns (monotonic ns 140 .. 150)
  p2 read -> "x"; called +45ns, returned +60ns (monotonic ns 145 .. 160)
`
	if got := s.String(); got != want {
		t.Errorf("String:\n%s\nwant:\n%s", got, want)
	}
	if c := check(t, hist(op(1, "fine", Acquire, none, gen(1), 0, 10))); c.Stuck != nil {
		t.Errorf("Stuck of a linearizable history: %v", c.Stuck)
	}
}

// TestStuckFirstOperation: the list of operations that could not come
// next stops at maxNext; a segment whose first operation cannot be
// placed says so from its start state; an open operation shows as one
// that never returned.
func TestStuckFirstOperation(t *testing.T) {
	evs := []Event{op(0, "k", Lock, none, ok, 0, 10)}
	for p := 1; p <= maxNext+2; p++ {
		evs = append(evs, op(p, "k", Lock, none, ok, 20, 30))
	}
	s := check(t, hist(evs...)).Stuck
	if s == nil || s.Placed != 1 || len(s.Next) != maxNext+2 {
		t.Fatalf("Stuck %+v; want p0's lock placed and the %d others not", s, maxNext+2)
	}
	text := s.String()
	if !strings.Contains(text, "leaving lock held by p0") || !strings.HasSuffix(text, "  ... and 2 more\n") ||
		strings.Count(text, "\n") != 1+maxNext+1 {
		t.Errorf("String:\n%s", text)
	}

	s = check(t, hist(op(0, "k", Acquire, none, gen(3), 0, 10))).Stuck
	want := `lease "k": porcupine placed none of the 1 operations it checked, from free; it could place none of these next:
  p0 acquire -> gen 3; called +0s, returned +10ns (monotonic ns 0 .. 10)
`
	if s == nil || s.Placed != 0 || s.String() != want {
		t.Fatalf("Stuck %+v:\n%s\nwant:\n%s", s, s, want)
	}
	// An operation of unknown outcome is allowed everywhere, so porcupine
	// rarely leaves one out; when it does, it shows as open.
	s.Next = append(s.Next, open(1, "k", Write, wr(3, "x"), 5))
	if line := "  p1 write(token 3, \"x\") -> open (crashed); called +5ns, never returned (monotonic ns 5 .. open)\n"; !strings.HasSuffix(s.String(), line) {
		t.Errorf("String:\n%s\nwant it to end with:\n%s", s, line)
	}
}

// TestWriteHTMLDrawsDiagnosis: after a violation WriteHTML draws the
// verbose check that found Stuck, of the failing object alone.
func TestWriteHTMLDrawsDiagnosis(t *testing.T) {
	r := check(t, hist(
		op(0, "k", Acquire, none, gen(1), 0, 10),
		op(1, "k", Acquire, none, gen(2), 20, 30),
		op(0, "k", Write, wr(1, "x"), ok, 40, 50),
		op(2, "other", Acquire, none, gen(1), 0, 10),
	))
	if r.diag == nil {
		t.Fatal("no diagnosis kept for WriteHTML")
	}
	path := filepath.Join(t.TempDir(), "history.html")
	if err := r.WriteHTML(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("p0 write(token 1, \\\"x\\\")")) || bytes.Contains(b, []byte("p2 acquire")) {
		t.Errorf("the page lacks the failing write, or draws the other object (%d bytes)", len(b))
	}
}

// TestUnknownReason: the reason of an operation of unknown outcome goes
// through the recorded files, shows in the printed history, and changes
// no verdict.
func TestUnknownReason(t *testing.T) {
	var buf bytes.Buffer
	rec := NewRecorder(&buf, 1, &stepClock{})
	p, err := rec.Begin("k", Write, wr(1, "x"))
	if err != nil {
		t.Fatal(err)
	}
	timeout := Output{Status: Unknown, Reason: "timeout"}
	if err := p.End(timeout); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"out":{"status":"unknown","reason":"timeout"}`) {
		t.Errorf("recorded %s", buf.String())
	}
	h, err := ReadHistory(&buf)
	if err != nil || len(h.Events) != 1 || h.Events[0].Output != timeout {
		t.Fatalf("read back %+v, %v", h.Events, err)
	}
	if got := h.Events[0].String(); !strings.HasSuffix(got, `write(token 1, "x") -> unknown (timeout)`) {
		t.Errorf("String() = %q", got)
	}
	for _, out := range []Output{unknown, timeout} {
		r := check(t, hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(0, "k", Write, wr(1, "x"), out, 20, 30),
			op(1, "k", Read, none, val("x"), 40, 50),
			op(1, "k", Read, none, val("y"), 60, 70),
		))
		if r.Verdict != Violation || !strings.Contains(r.ShortestFailing(), "p1 read -> \"y\"") {
			t.Errorf("with %+v: verdict %v\n%s", out, r.Verdict, r.ShortestFailing())
		}
	}
}
