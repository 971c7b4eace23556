package linearizability

import (
	"testing"
	"time"
)

// op builds a returned event; open builds one cut off by a crash.
func op(p int, key string, k Kind, in Input, out Output, call, ret int64) Event {
	return Event{Process: p, Key: key, Kind: k, Input: in, Output: out, Call: call, Return: ret}
}

func open(p int, key string, k Kind, in Input, call int64) Event {
	return Event{Process: p, Key: key, Kind: k, Input: in, Call: call, Open: true}
}

var (
	none    = Input{}
	ok      = Output{Status: OK}
	refused = Output{Status: Refused}
	done    = Output{Status: Done}
	unknown = Output{Status: Unknown}
)

func tok(t uint64) Input          { return Input{Token: t} }
func wr(t uint64, v string) Input { return Input{Token: t, Value: v} }
func gen(g uint64) Output         { return Output{Status: OK, Gen: g} }
func val(v string) Output         { return Output{Status: OK, Value: v} }
func hist(evs ...Event) History   { sortEvents(evs); return History{Events: evs} }
func check(t *testing.T, h History) Report {
	t.Helper()
	return Check(h, 10*time.Second)
}

func TestModels(t *testing.T) {
	tests := []struct {
		name string
		h    History
		want Verdict
	}{
		{"lease: acquire, write, read, release, reacquire", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(0, "k", Write, wr(1, "a"), ok, 20, 30),
			op(1, "k", Read, none, val("a"), 40, 50),
			op(0, "k", Release, tok(1), ok, 60, 70),
			op(1, "k", Acquire, none, gen(2), 80, 90),
			op(1, "k", Write, wr(2, "b"), ok, 100, 110),
			op(0, "k", Read, none, val("b"), 120, 130),
		), Linearizable},
		{"lease: stale token write accepted after a newer acquire", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(1, "k", Acquire, none, gen(2), 20, 30),
			op(0, "k", Write, wr(1, "x"), ok, 40, 50),
		), Violation},
		{"lease: stale token write refused after a newer acquire", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(1, "k", Acquire, none, gen(2), 20, 30),
			op(0, "k", Write, wr(1, "x"), refused, 40, 50),
		), Linearizable},
		{"lease: write with the current token refused", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(0, "k", Write, wr(1, "x"), refused, 20, 30),
			op(1, "k", Read, none, val(""), 40, 50),
		), Linearizable},
		{"lease: write after release accepted", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(0, "k", Release, tok(1), ok, 20, 30),
			op(0, "k", Write, wr(1, "x"), ok, 40, 50),
		), Violation},
		{"lease: write concurrent with a takeover accepted", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(0, "k", Write, wr(1, "x"), ok, 20, 50),
			op(1, "k", Acquire, none, gen(2), 30, 40),
		), Linearizable},
		{"lease: read of a value never written", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(0, "k", Write, wr(1, "a"), ok, 20, 30),
			op(1, "k", Read, none, val("b"), 40, 50),
		), Violation},
		{"lease: read of an overwritten value", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(0, "k", Write, wr(1, "a"), ok, 20, 30),
			op(0, "k", Write, wr(1, "b"), ok, 40, 50),
			op(1, "k", Read, none, val("a"), 60, 70),
		), Violation},
		{"lease: generation skipped", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(1, "k", Acquire, none, gen(3), 20, 30),
		), Violation},
		{"lease: generation repeated", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(1, "k", Acquire, none, gen(1), 20, 30),
		), Violation},
		{"lease: acquire refused while free", hist(
			op(0, "k", Acquire, none, refused, 0, 10),
		), Violation},
		{"lease: acquire refused after a release", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(0, "k", Release, tok(1), ok, 20, 30),
			op(1, "k", Acquire, none, refused, 40, 50),
		), Violation},
		{"lease: acquire refused concurrently with a release", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(0, "k", Release, tok(1), ok, 20, 40),
			op(1, "k", Acquire, none, refused, 30, 50),
		), Linearizable},
		{"lease: stale release writes a tombstone", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(1, "k", Acquire, none, gen(2), 20, 30),
			op(0, "k", Release, tok(1), ok, 40, 50),
		), Violation},
		{"lease: stale release refused, done, then the holder's release", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(1, "k", Acquire, none, gen(2), 20, 30),
			op(0, "k", Release, tok(1), refused, 40, 50),
			op(0, "k", Release, tok(1), done, 60, 70),
			op(1, "k", Acquire, none, refused, 80, 90),
			op(1, "k", Release, tok(2), done, 100, 110),
			op(0, "k", Acquire, none, gen(3), 120, 130),
		), Linearizable},
		{"lease: done release that could not take effect is not a release", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(1, "k", Acquire, none, gen(2), 20, 30),
			op(0, "k", Release, tok(1), done, 40, 50),
			op(0, "k", Acquire, none, refused, 60, 70),
		), Linearizable},
		{"lease: a break ends the holder; the next acquisition outranks the tombstone", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(2, "k", Break, none, gen(1), 20, 30),
			op(0, "k", Write, wr(1, "x"), refused, 40, 50),
			op(1, "k", Acquire, none, gen(3), 60, 70),
		), Linearizable},
		{"lease: the acquisition after a break gets the tombstone's generation", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(2, "k", Break, none, gen(1), 20, 30),
			op(1, "k", Acquire, none, gen(2), 60, 70),
		), Violation},
		{"lease: the holder writes after its break returned", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(2, "k", Break, none, gen(1), 20, 30),
			op(0, "k", Write, wr(1, "x"), ok, 40, 50),
		), Violation},
		{"lease: a break of a generation the record does not hold", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(1, "k", Acquire, none, gen(2), 20, 30),
			op(2, "k", Break, none, gen(1), 40, 50),
		), Violation},
		{"lease: a break of a released record", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(0, "k", Release, tok(1), ok, 20, 30),
			op(2, "k", Break, none, gen(1), 40, 50),
		), Violation},
		{"lease: a refused break changes nothing", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(2, "k", Break, none, refused, 20, 30),
			op(0, "k", Write, wr(1, "x"), ok, 40, 50),
		), Linearizable},
		{"lease: a break of unknown outcome may have ended the holder", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(2, "k", Break, none, unknown, 20, 30),
			op(1, "k", Acquire, none, gen(3), 40, 50),
		), Linearizable},
		{"lease: a stale write of unknown outcome ends where a break proves the record moved on", hist(
			op(0, "k", Acquire, none, gen(1), 0, 10),
			op(0, "k", Write, wr(1, "x"), unknown, 15, 18),
			op(2, "k", Break, none, gen(1), 20, 30),
			op(1, "k", Acquire, none, gen(3), 40, 50),
			op(1, "k", Read, none, val("x"), 60, 70),
		), Linearizable},
		{"lock: two holders overlap", hist(
			op(0, "l", Lock, none, ok, 0, 10),
			op(1, "l", Lock, none, ok, 20, 30),
			op(0, "l", Unlock, none, ok, 40, 50),
		), Violation},
		{"lock: holders take turns", hist(
			op(0, "l", Lock, none, ok, 0, 10),
			op(1, "l", Lock, none, refused, 15, 18),
			op(0, "l", Unlock, none, ok, 20, 30),
			op(1, "l", Lock, none, ok, 40, 50),
			op(1, "l", Unlock, none, ok, 60, 70),
		), Linearizable},
		{"lock: refused while free", hist(
			op(0, "l", Lock, none, ok, 0, 10),
			op(0, "l", Unlock, none, ok, 20, 30),
			op(1, "l", Lock, none, refused, 40, 50),
		), Violation},
		{"lock: both refused while taking it at once (the lock is busy while taken)", hist(
			op(0, "k", Lock, none, refused, 0, 40),
			op(1, "k", Lock, none, refused, 10, 50),
		), Linearizable},
		{"lock: refused during a contender's attempt of unknown outcome", hist(
			op(0, "k", Lock, none, refused, 10, 20),
			open(1, "k", Lock, none, 0),
		), Linearizable},
		{"lock: refused after a contender's attempt ended", hist(
			op(1, "k", Lock, none, refused, 0, 10),
			op(0, "k", Lock, none, refused, 20, 30),
		), Violation},
		{"lock: refused during another task's attempt in its own process", hist(
			op(0, "k", Lock, none, refused, 0, 40),
			op(0, "k", Lock, none, refused, 10, 30),
		), Linearizable},
		{"fence: sections in turn", hist(
			op(0, "k", Enter, none, ok, 0, 1),
			op(0, "k", Leave, none, ok, 10, 11),
			op(1, "k", Enter, none, ok, 20, 21),
			op(1, "k", Leave, none, ok, 30, 31),
		), Linearizable},
		{"fence: two sections overlap", hist(
			op(0, "k", Enter, none, ok, 0, 1),
			op(1, "k", Enter, none, ok, 10, 11),
			op(0, "k", Leave, none, ok, 20, 21),
			op(1, "k", Leave, none, ok, 30, 31),
		), Violation},
		{"fence: a crash ends its process's section", hist(
			op(0, "k", Enter, none, ok, 0, 1),
			Event{Process: 0, Kind: Crash, Output: ok, Call: 10, Return: 20},
			op(1, "k", Enter, none, ok, 30, 31),
		), Linearizable},
		{"fence: a section entered during the crash of the one under way", hist(
			op(0, "k", Enter, none, ok, 0, 1),
			Event{Process: 0, Kind: Crash, Output: ok, Call: 10, Return: 40},
			op(1, "k", Enter, none, ok, 20, 21),
		), Linearizable},
		{"fence and lock of one key are two objects", hist(
			op(0, "k", Enter, none, ok, 0, 1),
			op(1, "k", Lock, none, ok, 10, 20),
		), Linearizable},
		{"lock: unlock by a process that does not hold it", hist(
			op(0, "l", Lock, none, ok, 0, 10),
			op(1, "l", Unlock, none, ok, 20, 30),
		), Violation},
		{"lock: a crashed holder's lock taken after the crash", hist(
			op(0, "l", Lock, none, ok, 0, 10),
			op(0, "", Crash, none, ok, 30, 40),
			op(1, "l", Lock, none, ok, 50, 60),
		), Linearizable},
		{"lock: a crashed holder's lock taken before the crash", hist(
			op(0, "l", Lock, none, ok, 0, 10),
			op(1, "l", Lock, none, ok, 20, 25),
			op(0, "", Crash, none, ok, 30, 40),
		), Violation},
		{"lock: a crash of another process frees nothing", hist(
			op(0, "l", Lock, none, ok, 0, 10),
			op(2, "", Crash, none, ok, 30, 40),
			op(1, "l", Lock, none, ok, 50, 60),
		), Violation},
		{"lock and lease of one key are two objects", hist(
			op(0, "k", Lock, none, ok, 0, 10),
			op(1, "k", Acquire, none, gen(1), 20, 30),
		), Linearizable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := check(t, tt.h)
			if r.Verdict != tt.want {
				t.Fatalf("verdict %v, want %v", r.Verdict, tt.want)
			}
			if (r.Verdict == Violation) != (r.ShortestFailing() != "") {
				t.Errorf("ShortestFailing() = %q with verdict %v", r.ShortestFailing(), r.Verdict)
			}
		})
	}
}

const testTimeout = 10 * time.Second
