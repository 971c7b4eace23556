package linearizability

import (
	"math"
	"slices"
	"testing"
	"time"
)

// TestUncertainBothOutcomes checks the rule for operations of unknown
// outcome: each is accepted as having taken effect and as not, and a
// history that neither interpretation explains is still a violation.
func TestUncertainBothOutcomes(t *testing.T) {
	acq := op(0, "k", Acquire, none, gen(1), 0, 10)
	tests := []struct {
		name string
		h    History
		want Verdict
	}{
		{"crashed acquire took effect", hist(
			open(0, "k", Acquire, none, 0),
			op(1, "k", Acquire, none, gen(2), 20, 30),
		), Linearizable},
		{"crashed acquire took effect: the next is refused", hist(
			open(0, "k", Acquire, none, 0),
			op(1, "k", Acquire, none, refused, 20, 30),
		), Linearizable},
		{"crashed acquire did not take effect", hist(
			open(0, "k", Acquire, none, 0),
			op(1, "k", Acquire, none, gen(1), 20, 30),
		), Linearizable},
		{"crashed acquire explains one generation, not two", hist(
			open(0, "k", Acquire, none, 0),
			op(1, "k", Acquire, none, gen(3), 20, 30),
		), Violation},
		{"crashed acquire cannot precede its call", hist(
			op(1, "k", Acquire, none, gen(2), 0, 10),
			open(0, "k", Acquire, none, 20),
		), Violation},
		{"acquire failed with an unknown outcome took effect", hist(
			op(0, "k", Acquire, none, unknown, 0, 10),
			op(1, "k", Acquire, none, gen(2), 20, 30),
		), Linearizable},
		{"crashed write took effect", hist(acq,
			open(0, "k", Write, wr(1, "x"), 20),
			op(1, "k", Read, none, val("x"), 40, 50),
		), Linearizable},
		{"crashed write did not take effect", hist(acq,
			open(0, "k", Write, wr(1, "x"), 20),
			op(1, "k", Read, none, val(""), 40, 50),
		), Linearizable},
		{"crashed write took effect late", hist(acq,
			open(0, "k", Write, wr(1, "x"), 20),
			op(1, "k", Read, none, val(""), 40, 50),
			op(1, "k", Read, none, val("x"), 60, 70),
		), Linearizable},
		{"crashed write explains only its own value", hist(acq,
			open(0, "k", Write, wr(1, "x"), 20),
			op(1, "k", Read, none, val("y"), 40, 50),
		), Violation},
		{"crashed stale write cannot take effect", hist(acq,
			op(1, "k", Acquire, none, gen(2), 12, 15),
			open(0, "k", Write, wr(1, "x"), 20),
			op(1, "k", Read, none, val("x"), 40, 50),
		), Violation},
		{"write failed with an unknown outcome may land after its return", hist(acq,
			op(0, "k", Write, wr(1, "x"), unknown, 20, 30),
			op(1, "k", Read, none, val(""), 40, 50),
			op(1, "k", Read, none, val("x"), 60, 70),
		), Linearizable},
		{"crashed release took effect", hist(acq,
			open(0, "k", Release, tok(1), 20),
			op(1, "k", Acquire, none, gen(2), 40, 50),
		), Linearizable},
		{"crashed release did not take effect", hist(acq,
			open(0, "k", Release, tok(1), 20),
			op(1, "k", Acquire, none, refused, 40, 50),
		), Linearizable},
		{"crashed read returns nothing to check", hist(acq,
			open(1, "k", Read, none, 20),
		), Linearizable},
		{"crashed lock took effect", hist(
			open(0, "l", Lock, none, 0),
			op(1, "l", Lock, none, refused, 20, 30),
		), Linearizable},
		{"crashed lock did not take effect", hist(
			open(0, "l", Lock, none, 0),
			op(1, "l", Lock, none, ok, 20, 30),
			op(1, "l", Unlock, none, ok, 40, 50),
		), Linearizable},
		{"crashed unlock did or did not take effect", hist(
			op(0, "l", Lock, none, ok, 0, 10),
			open(0, "l", Unlock, none, 20),
			op(1, "l", Lock, none, refused, 30, 40),
			op(1, "l", Lock, none, ok, 50, 60),
		), Linearizable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := check(t, tt.h); r.Verdict != tt.want {
				t.Fatalf("verdict %v, want %v\n%s", r.Verdict, tt.want, r.ShortestFailing())
			}
		})
	}
}

// TestUncertainStepAlwaysAllowed checks the models' rule directly: in
// every state, an operation of unknown outcome is allowed, and it takes
// effect exactly when a known success could have.
func TestUncertainStepAlwaysAllowed(t *testing.T) {
	states := []state{
		{}, {gen: 1, held: true}, {gen: 2, held: false, value: "v"}, {gen: 3, held: true, value: "w"},
		{holder: 1}, {holder: 3},
	}
	kinds := []Kind{Acquire, Release, Write, Read, Lock, Unlock, Crash}
	for _, s := range states {
		for _, k := range kinds {
			for _, tk := range []uint64{1, 2, 3} {
				for _, out := range []Output{unknown, done} {
					e := &Event{Process: 0, Kind: k, Input: wr(tk, "z"), Output: out}
					okStep, next := step(s, e)
					canApply, applied := applies(s, e)
					if !okStep {
						t.Errorf("%v in %v with %v refused", k, s, out.Status)
					}
					if canApply && next != applied || !canApply && next != s {
						t.Errorf("%v in %v with %v: next %v, want %v (applies %v)", k, s, out.Status, next, applied, canApply)
					}
				}
			}
		}
	}
	e := open(0, "k", Write, wr(1, "z"), 5)
	e.Output = ok // an open event's output is ignored
	if !e.Uncertain() {
		t.Fatal("open event with status OK is not uncertain")
	}
}

// TestUncertainEnds checks the encoding (see reduce): a known
// operation ends at its return; one of unknown outcome at math.MaxInt64,
// unless a known outcome proves it moved past (then it ends there, or is
// dropped if that was before its call), or it is a read (dropped); the
// acquisitions of unknown outcome are ranked in call order.
func TestUncertainEnds(t *testing.T) {
	evs := []Event{
		op(0, "k", Acquire, none, gen(1), 0, 10),
		op(0, "k", Write, wr(1, "a"), unknown, 20, 30),
		open(1, "k", Read, none, 40),
		op(0, "k", Release, tok(1), done, 50, 60),
		open(2, "k", Acquire, none, 55),
		op(1, "k", Acquire, none, unknown, 62, 64),
		op(1, "k", Acquire, none, gen(3), 70, 80),
		op(1, "k", Write, wr(1, "b"), unknown, 75, 78),
		op(1, "k", Write, wr(1, "c"), unknown, 85, 90),
		op(2, "k", Release, tok(3), unknown, 90, 95),
	}
	parts := partitions(evs, false)
	if len(parts) != 1 || len(parts[0].evs) != len(evs) {
		t.Fatalf("partitions = %+v", parts)
	}
	type end struct {
		call, ret int64
		rank      int
	}
	// The open read is dropped; a release Done proves nothing (it may
	// have found the record at a smaller generation); the write with
	// token 1 called at 85, after gen 3 returned, is dropped.
	want := []end{{0, 10, 0}, {20, 80, 0}, {50, 60, 0}, {55, math.MaxInt64, 1}, {62, math.MaxInt64, 2},
		{70, 80, 0}, {75, 80, 0}, {90, math.MaxInt64, 0}}
	var got []end
	for _, o := range parts[0].ops {
		got = append(got, end{o.Call, o.Return, o.Input.(*input).rank})
	}
	if !slices.Equal(got, want) {
		t.Fatalf("operations (call, end, rank) %v\nwant %v", got, want)
	}
}

// TestLocalBounds: in a Local history an operation of unknown outcome
// takes effect by its return, or by its process's reap when it was killed,
// or never; a history where it took effect later is a violation there,
// and linearizable without the bound (a server's transaction may commit
// after its client gave up).
func TestLocalBounds(t *testing.T) {
	acq := op(0, "k", Acquire, none, gen(1), 0, 10)
	tests := []struct {
		name        string
		h           History
		local, open Verdict // with History.Local, and without
	}{
		{"unknown write took effect after its return", hist(acq,
			op(0, "k", Write, wr(1, "x"), unknown, 20, 30),
			op(1, "k", Read, none, val(""), 40, 50),
			op(1, "k", Read, none, val("x"), 60, 70),
		), Violation, Linearizable},
		{"unknown write took effect before its return", hist(acq,
			op(0, "k", Write, wr(1, "x"), unknown, 20, 30),
			op(1, "k", Read, none, val("x"), 40, 50),
		), Linearizable, Linearizable},
		{"killed write took effect after its process was reaped", hist(acq,
			open(0, "k", Write, wr(1, "x"), 20),
			op(0, "", Crash, none, ok, 25, 35),
			op(1, "k", Read, none, val(""), 40, 50),
			op(1, "k", Read, none, val("x"), 60, 70),
		), Violation, Linearizable},
		{"killed write took effect before its process was reaped", hist(acq,
			open(0, "k", Write, wr(1, "x"), 20),
			op(0, "", Crash, none, ok, 25, 35),
			op(1, "k", Read, none, val("x"), 40, 50),
		), Linearizable, Linearizable},
		{"killed write never took effect", hist(acq,
			op(0, "k", Write, wr(1, "x"), ok, 15, 18),
			open(0, "k", Write, wr(1, "y"), 20),
			op(0, "", Crash, none, ok, 25, 35),
			op(1, "k", Read, none, val("x"), 40, 50),
		), Linearizable, Linearizable},
		{"unknown write never took effect", hist(acq,
			op(0, "k", Write, wr(1, "y"), unknown, 20, 30),
			op(1, "k", Read, none, val(""), 40, 50),
		), Linearizable, Linearizable},
		{"killed acquire took effect after its process was reaped", hist(
			open(0, "k", Acquire, none, 0),
			op(0, "", Crash, none, ok, 5, 15),
			op(1, "k", Acquire, none, gen(1), 20, 30),
			op(2, "k", Acquire, none, gen(3), 40, 50),
		), Violation, Linearizable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, local := range []bool{true, false} {
				h := tt.h
				h.Local = local
				want := tt.open
				if local {
					want = tt.local
				}
				if got := Check(h, time.Minute).Verdict; got != want {
					t.Errorf("Local %v: %v, want %v", local, got, want)
				}
			}
		})
	}
}
