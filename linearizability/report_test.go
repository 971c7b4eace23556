package linearizability

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReportNamesShortestFailing checks the report's counts and that of
// two failing objects the shorter history is named and printed first.
func TestReportNamesShortestFailing(t *testing.T) {
	h := hist(
		// lease "long": 4 operations, a stale write accepted.
		op(0, "long", Acquire, none, gen(1), 0, 10),
		op(1, "long", Acquire, none, refused, 12, 14),
		op(1, "long", Acquire, none, gen(2), 20, 30),
		op(0, "long", Write, wr(1, "x"), ok, 40, 50),
		// lock "short": 2 operations, two holders.
		op(0, "short", Lock, none, ok, 0, 10),
		op(1, "short", Lock, none, ok, 20, 30),
		// lease "fine", with an open acquire.
		open(2, "fine", Acquire, none, 0),
	)
	r := check(t, h)
	if r.Verdict != Violation || r.Keys != 3 || r.Ops != 7 || r.Uncertain != 1 {
		t.Fatalf("report %+v", r)
	}
	want := []ObjectID{{"lock", "short"}, {"lease", "long"}}
	if len(r.Failing) != 2 || r.Failing[0] != want[0] || r.Failing[1] != want[1] || r.FailingKey != "short" {
		t.Fatalf("failing %v (key %q), want %v", r.Failing, r.FailingKey, want)
	}
	got := r.ShortestFailing()
	wantText := `lock "short": 2 operations, not linearizable
  +0s .. +10ns  p0 lock -> ok
  +20ns .. +30ns  p1 lock -> ok
`
	if got != wantText {
		t.Fatalf("ShortestFailing:\n%s\nwant:\n%s", got, wantText)
	}
	if s := check(t, hist(open(2, "fine", Acquire, none, 0))).ShortestFailing(); s != "" {
		t.Fatalf("ShortestFailing of a linearizable history = %q", s)
	}
}

// TestShortestFailingUnknownOutcomes checks how the printed history
// shows the operations of unknown outcome as the check took them: with
// an open end, ending at a proof that the record moved on, or left out.
func TestShortestFailingUnknownOutcomes(t *testing.T) {
	h := hist(
		op(0, "k", Acquire, none, gen(1), 0, 10),
		op(0, "k", Write, wr(1, "a"), unknown, 20, 30),
		open(2, "k", Acquire, none, 25),
		op(1, "k", Acquire, none, gen(2), 40, 50),
		open(0, "k", Write, wr(1, "b"), 55),
		open(2, "k", Read, none, 56),
		op(1, "k", Release, tok(2), unknown, 57, 58),
		op(1, "k", Read, none, val("never written"), 60, 70),
	)
	r := check(t, h)
	want := `lease "k": 8 operations, not linearizable
  +0s .. +10ns  p0 acquire -> gen 1
  +20ns .. +30ns (outcome unknown: takes effect by +50ns if at all)  p0 write(token 1, "a") -> unknown
  +25ns .. open  p2 acquire -> open (crashed)
  +40ns .. +50ns  p1 acquire -> gen 2
  +55ns .. open (outcome unknown: changes nothing, left out)  p0 write(token 1, "b") -> open (crashed)
  +56ns .. open (outcome unknown: changes nothing, left out)  p2 read -> open (crashed)
  +57ns .. +58ns (outcome unknown: open end)  p1 release(token 2) -> unknown
  +60ns .. +70ns  p1 read -> "never written"
`
	if got := r.ShortestFailing(); r.Verdict != Violation || got != want {
		t.Fatalf("verdict %v, ShortestFailing:\n%s\nwant:\n%s", r.Verdict, got, want)
	}
}

// TestEventJSON pins the JSON form of an Event.
func TestEventJSON(t *testing.T) {
	e := Event{Process: 2, Key: "k", Kind: Write, Input: wr(3, "v"), Output: refused, Call: 5, Return: 9}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"process":2,"key":"k","kind":"write","input":{"token":3,"value":"v"},"output":{"status":"refused"},"call":5,"return":9}`
	if string(b) != want {
		t.Fatalf("JSON %s\nwant %s", b, want)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil || back != e {
		t.Fatalf("round trip %+v, %v", back, err)
	}
	if _, err := json.Marshal(Event{}); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Fatalf("an event without a kind encodes: %v", err)
	}
}
