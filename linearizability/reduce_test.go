package linearizability

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// unreduced checks h with every operation of unknown outcome ending at
// math.MaxInt64, unranked: the history as recorded, without reduce.
func unreduced(h History, timeout time.Duration) porcupine.CheckResult {
	clients := clientIDs(h.Events)
	byKey := map[string][]porcupine.Operation{}
	var keys []string
	for i := range h.Events {
		e := &h.Events[i]
		ret := e.Return
		if e.Uncertain() {
			ret = math.MaxInt64
		}
		if byKey[e.Key] == nil {
			keys = append(keys, e.Key)
		}
		byKey[e.Key] = append(byKey[e.Key], porcupine.Operation{ClientId: clients[e.Process], Input: &input{Event: e}, Call: e.Call, Return: ret})
	}
	var parts [][]porcupine.Operation
	for _, k := range keys {
		parts = append(parts, byKey[k])
	}
	m := model(false)
	m.Partition = func([]porcupine.Operation) [][]porcupine.Operation { return parts }
	return porcupine.CheckOperationsTimeout(m, nil, timeout)
}

// faulty returns a generated lease history in which some operations
// have an unknown outcome (returned Unknown, or open), many of them
// without having taken effect (refused acquisitions and stale writes
// made uncertain), some refused writes and releases Done carry a token
// not yet issued, and, for odd seeds, one known answer is corrupted.
func faulty(seed uint64) History {
	h := genHistory(seed, 36, 2, 4)
	rng := rand.New(rand.NewPCG(seed, 2))
	for i := range h.Events {
		e := &h.Events[i]
		switch n := rng.IntN(10); {
		case n < 2:
			e.Output = unknown
		case n == 2:
			e.Open, e.Return, e.Output = true, 0, Output{}
		case n == 3 && (e.Kind == Write && e.Output.Status == Refused || e.Kind == Release && e.Output.Status == Done):
			e.Input.Token += 3 // a token not yet issued, which proves nothing
		}
	}
	if seed%2 == 1 {
		for _, i := range rng.Perm(len(h.Events)) {
			e := &h.Events[i]
			if e.Uncertain() {
				continue
			}
			switch {
			case e.Kind == Read:
				e.Output.Value = fmt.Sprintf("v%d", rng.IntN(36))
			case e.Kind == Acquire && e.Output.Status == OK:
				e.Output.Gen += uint64(1 + rng.IntN(2))
			case e.Kind == Write && e.Output.Status == Refused:
				e.Output = ok
			default:
				continue
			}
			break
		}
	}
	return h
}

// TestReduceKeepsVerdicts checks that reduce changes no verdict: on
// generated histories with operations of unknown outcome, linearizable
// or corrupted, Check agrees with porcupine on the history as recorded.
func TestReduceKeepsVerdicts(t *testing.T) {
	verdicts := map[Verdict]int{}
	for seed := range uint64(400) {
		h := faulty(seed)
		want := Linearizable
		switch unreduced(h, testTimeout) {
		case porcupine.Illegal:
			want = Violation
		case porcupine.Unknown:
			continue
		}
		r := Check(h, testTimeout)
		if r.Verdict != want {
			t.Fatalf("seed %d: verdict %v, want %v\n%s", seed, r.Verdict, want, r.ShortestFailing())
		}
		verdicts[want]++
	}
	if verdicts[Linearizable] < 100 || verdicts[Violation] < 50 {
		t.Fatalf("too few of each verdict to compare: %v", verdicts)
	}
}

// outageHistory is a history like a campaign's whose store's server is
// down now and then: three processes take turns acquiring one key,
// writing, reading and releasing it; during each of five outages, each
// tries to acquire the key five times, every try failing with an
// unknown outcome. The first acquisition after each outage finds the
// generation raised by took of those tries.
func outageHistory(took uint64) History {
	var evs []Event
	now, g := int64(0), uint64(0)
	for round := range 40 {
		p := round % 3
		g++
		evs = append(evs,
			op(p, "k", Acquire, none, gen(g), now, now+10),
			op((p+1)%3, "k", Acquire, none, refused, now+5, now+15),
			op(p, "k", Write, wr(g, fmt.Sprint(g)), ok, now+20, now+30),
			op((p+2)%3, "k", Read, none, val(fmt.Sprint(g)), now+35, now+40),
			op(p, "k", Release, tok(g), done, now+45, now+50))
		now += 60
		if round%8 == 7 {
			for range 5 {
				for q := range 3 {
					evs = append(evs, op(q, "k", Acquire, none, unknown, now+int64(q), now+20+int64(q)))
				}
				now += 30
			}
			g += took
		}
	}
	return hist(evs...)
}

// TestReduceManyUnknownAcquisitions checks histories with many
// acquisitions of unknown outcome on one key. Pending together, they
// make porcupine's search exponential; taken in call order, linear. The
// check must be conclusive whether none or some of them took effect,
// and still find a generation that skips one no acquisition explains.
func TestReduceManyUnknownAcquisitions(t *testing.T) {
	for _, took := range []uint64{0, 3} {
		r := Check(outageHistory(took), time.Minute)
		if r.Verdict != Linearizable || r.Uncertain != 75 {
			t.Fatalf("%d took effect: verdict %v, %d of unknown outcome", took, r.Verdict, r.Uncertain)
		}
	}
	// An acquisition before the first outage that got a generation one
	// too large: no acquisition of unknown outcome was called before it.
	h := outageHistory(0)
	for i := range h.Events {
		if e := &h.Events[i]; e.Kind == Acquire && e.Output.Gen == 5 {
			e.Output.Gen = 6
			break
		}
	}
	if r := Check(h, time.Minute); r.Verdict != Violation {
		t.Fatalf("generation skipped before any unknown acquisition: verdict %v", r.Verdict)
	}
}

// TestProofsMatchAScan: the sorted proofs answer as a scan of every
// event does, on random histories, the largest token and generation
// among their values.
func TestProofsMatchAScan(t *testing.T) {
	scan := func(evs []*Event, t uint64) (int64, bool) {
		var b int64
		found := false
		for _, d := range evs {
			if d.Uncertain() || d.Output.Status != OK {
				continue
			}
			proves := d.Kind == Acquire && d.Output.Gen > t || d.Kind == Write && d.Input.Token > t ||
				d.Kind == Release && d.Input.Token >= t
			if proves && (!found || d.Return < b) {
				b, found = d.Return, true
			}
		}
		return b, found
	}
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []Kind{Acquire, Write, Release, Read}
	statuses := []Status{OK, OK, Refused, Unknown}
	for range 200 {
		var evs []*Event
		for range rng.IntN(20) {
			evs = append(evs, &Event{Kind: kinds[rng.IntN(len(kinds))], Return: rng.Int64N(100),
				Input:  Input{Token: edgy(rng.Uint64N(7))},
				Output: Output{Status: statuses[rng.IntN(len(statuses))], Gen: edgy(rng.Uint64N(7))}})
		}
		p := proofsOf(evs)
		for g := range uint64(8) {
			g = edgy(g)
			wantAt, want := scan(evs, g)
			gotAt, got := p.movedPast(g)
			if got != want || got && gotAt != wantAt {
				t.Fatalf("generation %d: (%d, %v), a scan says (%d, %v)", g, gotAt, got, wantAt, want)
			}
		}
	}
}

// edgy maps 6 and 7 to the largest uint64 and the one below it.
func edgy(v uint64) uint64 {
	if v >= 6 {
		return math.MaxUint64 - (v - 6)
	}
	return v
}
