package worldmodel

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// leaseModelOf returns p's lease world within b, with or without symmetry
// reduction.
func leaseModelOf(tb testing.TB, p policy.Policy, b LeaseBounds, symmetry bool) modelcheck.Model[LeaseWorld] {
	tb.Helper()
	m, err := LeaseModel(p, b)
	if err != nil {
		tb.Fatal(err)
	}
	if !symmetry {
		m.Canonical = nil
	}
	return m
}

// leaseTrace renders a violation's trace for a failure message.
func leaseTrace(m modelcheck.Model[LeaseWorld], r modelcheck.Result[LeaseWorld]) string {
	if r.Violation == nil {
		return "(no violation)"
	}
	var b strings.Builder
	if err := r.Violation.WriteTrace(&b, m.Format); err != nil {
		return err.Error()
	}
	return b.String()
}

func leaseRun(m modelcheck.Model[LeaseWorld]) modelcheck.Result[LeaseWorld] {
	return modelcheck.Check(m, modelcheck.Options{MaxStates: testMaxStates})
}

// TestLeaseWorldShippedPolicyPasses checks the shipped policy, generated
// and interpreted from the spec, at the default bounds with and without
// symmetry reduction; both must visit the same worlds.
func TestLeaseWorldShippedPolicyPasses(t *testing.T) {
	policies := []policy.Policy{fsm.LeasePolicy, specPolicy(t, "../spec/lease.fsm", nil)}
	var states [2][2]int
	for pi, p := range policies {
		for si, sym := range []bool{false, true} {
			m := leaseModelOf(t, p, DefaultLeaseBounds(), sym)
			r := leaseRun(m)
			if r.Verdict != modelcheck.Passed {
				t.Fatalf("%s, symmetry %v: %s\n%s", p.Name(), sym, r.Summary(), leaseTrace(m, r))
			}
			t.Logf("symmetry %v: %s", sym, r.Summary())
			states[pi][si] = r.States
			if pi == 0 {
				wantParallelSame(t, m, modelcheck.Options{MaxStates: testMaxStates}, r)
			}
		}
	}
	if states[0] != states[1] {
		t.Errorf("the generated and the interpreted policy visit different numbers of worlds: %v", states)
	}
	if states[0][1] >= states[0][0] {
		t.Errorf("symmetry reduction visits %d worlds, no fewer than %d without", states[0][1], states[0][0])
	}
}

// TestLeaseWorldReachesEveryRow guards against a world too poor to find
// anything: at the default bounds every row of the shipped spec fires,
// and late repository results reach a lost handle. The spec's other
// ignored pairs are stale timers and second Close calls, which the
// runtime as the world defines it never delivers.
func TestLeaseWorldReachesEveryRow(t *testing.T) {
	rec := newStepRecorder(fsm.LeasePolicy)
	m := leaseModelOf(t, rec, DefaultLeaseBounds(), true)
	if r := leaseRun(m); r.Verdict != modelcheck.Passed {
		t.Fatalf("%s\n%s", r.Summary(), leaseTrace(m, r))
	}
	table := fsm.LeasePolicy.Table()
	for _, row := range table.Rows {
		if !rec.fired[row.Line] {
			t.Errorf("lease.fsm:%d never fires at the default bounds", row.Line)
		}
	}
	for _, tr := range []policy.TriggerID{policy.LeaseSaved, policy.LeaseConflict, policy.LeaseRepoFailed} {
		if !rec.ignored[policy.Pair{State: policy.StateID(fsm.LeaseLost), Trigger: policy.TriggerID(tr)}] {
			t.Errorf("a late %v never reaches a lost handle", tr)
		}
	}
}

// leaseMutations are the seeded bugs in testdata/mutations: the invariant
// that catches each, and the length of the shortest counterexample.
var leaseMutations = []struct {
	file      string
	invariant string
	steps     int
}{
	{"lease-fence-without-reread.fsm", leaseInvStale, 9},
	{"lease-takeover-before-ttl.fsm", leaseInvEarly, 6},
	{"lease-tombstone-successor.fsm", leaseInvGenBack, 11},
	{"lease-lost-runs-fenced.fsm", leaseInvLostWork, 5},
	{"lease-dead-holder-held.fsm", leaseInvDead, 6},
	{"lease-deadline-ignored.fsm", leaseInvDeadline, 4},
	{"lease-lost-rejects-fence.fsm", leaseInvRejected, 5},
	{"lease-renew-reloads.fsm", leaseInvOutputs, 4},
	{"lease-renew-conflict-retried.fsm", leaseInvConflict, 7},
	{"lease-silent-holder-held.fsm", leaseInvSilentLocal, 7},
}

// TestLeaseWorldCatchesMutations checks that every seeded bug is caught by
// its invariant with the shortest counterexample, with and without
// symmetry reduction.
func TestLeaseWorldCatchesMutations(t *testing.T) {
	for _, mu := range leaseMutations {
		t.Run(strings.TrimSuffix(mu.file, ".fsm"), func(t *testing.T) {
			p := specPolicy(t, filepath.Join("testdata", "mutations", mu.file), nil)
			for _, sym := range []bool{false, true} {
				m := leaseModelOf(t, p, DefaultLeaseBounds(), sym)
				r := leaseRun(m)
				if r.Verdict != modelcheck.Violated {
					t.Fatalf("symmetry %v: %s, want a violation of %q", sym, r.Summary(), mu.invariant)
				}
				v := r.Violation
				wantStory(t, m, v)
				wantParallelSame(t, m, modelcheck.Options{MaxStates: testMaxStates}, r)
				if v.Property != mu.invariant || len(v.Trace)-1 != mu.steps {
					t.Errorf("symmetry %v: %q after %d steps, want %q after %d\n%s",
						sym, v.Property, len(v.Trace)-1, mu.invariant, mu.steps, leaseTrace(m, r))
				} else if !sym {
					t.Logf("%s\n%s", r.Summary(), leaseTrace(m, r))
				}
			}
		})
	}
}

// TestLeaseMutationsListed keeps the mutation files and the table in step,
// and requires each file to say what bug it seeds.
func TestLeaseMutationsListed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "mutations", "lease-*.fsm"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, mu := range leaseMutations {
		listed[mu.file] = true
	}
	for _, f := range files {
		if !listed[filepath.Base(f)] {
			t.Errorf("%s is not in leaseMutations", f)
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(src), "# mutation: ") {
			t.Errorf("%s does not start with a # mutation: comment", f)
		}
	}
	if len(files) != len(leaseMutations) {
		t.Errorf("%d lease mutation files, %d listed", len(files), len(leaseMutations))
	}
	invs := map[string]bool{}
	for _, mu := range leaseMutations {
		invs[mu.invariant] = true
	}
	if len(invs) < 3 {
		t.Errorf("the mutations exercise %d invariants, want at least 3", len(invs))
	}
}

// leaseInvariant returns m's invariant named name.
func leaseInvariant(tb testing.TB, m modelcheck.Model[LeaseWorld], name string) func(LeaseWorld) error {
	tb.Helper()
	for _, inv := range m.Invariants {
		if inv.Name == name {
			return inv.Check
		}
	}
	tb.Fatalf("no invariant %q", name)
	return nil
}

// TestLeaseInvariantsCanFail shows the invariants that no seeded bug
// reaches failing on crafted worlds: the fence keeps sections apart, and
// a claim always writes one above the record it loaded, so only a world
// the model cannot reach breaks them.
func TestLeaseInvariantsCanFail(t *testing.T) {
	m := leaseModelOf(t, fsm.LeasePolicy, DefaultLeaseBounds(), false)
	held := leaseHolder{hs: leasestep.Handle[uint8]{State: policy.StateID(fsm.LeaseHeld), Token: 1, Life: leasestep.LifeHeld}, fcall: leaseFenceWorking, flags: leaseArmed}

	var v leaseVars
	v.h[0], v.h[1] = held, held
	v.h[1].hs.Token = 2
	v.rec[0] = leaseRecord{gen: 2, by: 2, fence: 2}
	err := leaseInvariant(t, m, leaseInvOverlap)(v.pack())
	if err == nil || !strings.Contains(err.Error(), "generation 2 runs while h0's with generation 1") {
		t.Errorf("%s on two sections of generations 1 and 2: %v", leaseInvOverlap, err)
	}
	v.h[1].hs.Token = 1
	if err := leaseInvariant(t, m, leaseInvOverlap)(v.pack()); err != nil {
		t.Errorf("%s on two sections of one generation: %v", leaseInvOverlap, err)
	}

	// A record of generation 1 after a claim of generation 3 (no model
	// move leads here): h0's acquisition claims 2 again.
	var w leaseVars
	for i := range w.h {
		w.h[i].hs.State = policy.StateID(fsm.LeaseIdle)
	}
	w.rec[0] = leaseRecord{gen: 1, by: 2, free: 1, top: 3}
	w.h[0].hs.State, w.h[0].hs.Life, w.h[0].hs.Call = policy.StateID(fsm.LeaseAcquiring), leasestep.LifeAcquiring, leasestep.CallLoad
	m.Init = []LeaseWorld{w.pack()}
	r := leaseRun(m)
	if r.Verdict != modelcheck.Violated || r.Violation.Property != leaseInvRepeat {
		t.Fatalf("%s, want a violation of %q\n%s", r.Summary(), leaseInvRepeat, leaseTrace(m, r))
	}
	t.Logf("%s\n%s", r.Summary(), leaseTrace(m, r))
}

// TestLeaseWorldOwesStuckCalls checks Owes: a policy that never answers
// Acquire leaves the call pending in a world without moves.
func TestLeaseWorldOwesStuckCalls(t *testing.T) {
	src, err := os.ReadFile("../spec/lease.fsm")
	if err != nil {
		t.Fatal(err)
	}
	stuck := strings.Replace(string(src), "Idle       --Acquire / load ", "Idle       --Acquire        ", 1)
	if stuck == string(src) {
		t.Fatal("the spec's Acquire row changed; update this test")
	}
	p := specPolicy(t, "stuck.fsm", []byte(stuck))
	m := leaseModelOf(t, p, LeaseBounds{Holders: 1, Generations: 1}, false)
	r := leaseRun(m)
	if r.Verdict != modelcheck.Violated || r.Violation.Property != "owes work" ||
		!strings.Contains(r.Violation.Reason, "h0's Acquire call has not returned") || len(r.Violation.Trace) != 2 {
		t.Fatalf("%s, want h0's Acquire owed after 1 step\n%s", r.Summary(), leaseTrace(m, r))
	}
	if owed := m.Owes(m.Init[0]); owed != "" {
		t.Errorf("the initial world owes %q", owed)
	}
}

// TestLeaseModelRejectsBadArguments checks that bounds out of range and
// policies of another vocabulary are refused with the field named.
func TestLeaseModelRejectsBadArguments(t *testing.T) {
	good := DefaultLeaseBounds()
	with := func(f func(*LeaseBounds)) LeaseBounds { b := good; f(&b); return b }
	for _, c := range []struct {
		p     policy.Policy
		b     LeaseBounds
		field string
	}{
		{nil, good, "Policy"},
		{fsm.LanePolicy, good, "Policy"},
		{fsm.LeasePolicy, with(func(b *LeaseBounds) { b.Holders = 0 }), "Holders"},
		{fsm.LeasePolicy, with(func(b *LeaseBounds) { b.Holders = LeaseMaxHolders + 1 }), "Holders"},
		{fsm.LeasePolicy, with(func(b *LeaseBounds) { b.Remote = -1 }), "Remote"},
		{fsm.LeasePolicy, with(func(b *LeaseBounds) { b.Remote = b.Holders + 1 }), "Remote"},
		{fsm.LeasePolicy, with(func(b *LeaseBounds) { b.Generations = 0 }), "Generations"},
		{fsm.LeasePolicy, with(func(b *LeaseBounds) { b.Generations = 17 - b.Holders }), "Generations"},
	} {
		_, err := LeaseModel(c.p, c.b)
		var me *ModelError
		if !errors.As(err, &me) || me.Field != c.field {
			t.Errorf("LeaseModel(%v, %+v) = %v, want a *ModelError for %s", c.p, c.b, err, c.field)
		}
	}
	if _, err := LeaseModel(fsm.LeasePolicy, with(func(b *LeaseBounds) { b.Generations = 16 - b.Holders })); err != nil {
		t.Errorf("the largest Generations: %v", err)
	}
}

// leaseReachable explores m and returns every world it visits, in order.
func leaseReachable(tb testing.TB, m modelcheck.Model[LeaseWorld]) []LeaseWorld {
	tb.Helper()
	seen := map[LeaseWorld]bool{}
	var order []LeaseWorld
	next := m.Next
	m.Next = func(w LeaseWorld, yield func(string, LeaseWorld)) {
		if !seen[w] {
			seen[w] = true
			order = append(order, w)
		}
		next(w, yield)
	}
	if r := leaseRun(m); r.Verdict != modelcheck.Passed {
		tb.Fatal(r.Summary())
	}
	return order
}

// leaseFirstWorlds returns the first n worlds of m a breadth-first search
// reaches, in the order it reaches them.
func leaseFirstWorlds(tb testing.TB, m modelcheck.Model[LeaseWorld], n int) []LeaseWorld {
	tb.Helper()
	var order []LeaseWorld
	next := m.Next
	m.Next = func(w LeaseWorld, yield func(string, LeaseWorld)) {
		order = append(order, w)
		next(w, yield)
	}
	if r := modelcheck.Check(m, modelcheck.Options{MaxStates: n}); r.Verdict == modelcheck.Violated {
		tb.Fatal(r.Summary())
	}
	return order
}

// TestLeaseWorldPacking checks that packing loses nothing the model
// reaches: every world unpacks and packs back to itself, and a holder's
// bits are a function of its variables alone, as Canonical assumes.
func TestLeaseWorldPacking(t *testing.T) {
	for _, b := range []LeaseBounds{DefaultLeaseBounds(), BatchLeaseBounds()} {
		m := leaseModelOf(t, fsm.LeasePolicy, b, true)
		for _, w := range leaseReachable(t, m) {
			v := w.unpack()
			if got := v.pack(); got != w {
				t.Fatalf("%+v packs back to %+v", w, got)
			}
			for i := range v.h {
				if x := v.h[i].word(); x != w.holder(i) || leaseUnpackHolderWord(x) != v.h[i] {
					t.Fatalf("holder %d of %+v does not round-trip: %+v", i, w, v.h[i])
				}
			}
			for k := range v.rec {
				if leaseUnpackRecordWord(v.rec[k].word()) != v.rec[k] {
					t.Fatalf("record %d of %+v does not round-trip: %+v", k, w, v.rec[k])
				}
			}
		}
	}
}

// TestLeaseWorldCanonical checks that Canonical maps a world and its
// mirror image (holders of one process table swapped) to one world, and
// is idempotent.
func TestLeaseWorldCanonical(t *testing.T) {
	m := leaseModelOf(t, fsm.LeasePolicy, DefaultLeaseBounds(), true)
	worlds := leaseReachable(t, leaseModelOf(t, fsm.LeasePolicy, DefaultLeaseBounds(), false))
	for _, w := range worlds[:min(len(worlds), 20000)] {
		c := m.Canonical(w)
		if m.Canonical(c) != c {
			t.Fatalf("Canonical is not idempotent on %s", m.Format(w))
		}
		v := w.unpack()
		s := v
		s.h[0], s.h[1] = v.h[1], v.h[0]
		swap := [LeaseMaxHolders + 1]uint8{0, 2, 1, 3, 4}
		s.rec[0].by, s.rec[0].fence, s.faultAt = swap[v.rec[0].by], swap[v.rec[0].fence], swap[v.faultAt]
		if got := m.Canonical(s.pack()); got != c {
			t.Fatalf("the mirror of %s\nis canonically %s,\nnot %s", m.Format(w), m.Format(got), m.Format(c))
		}
	}
}

// TestLeaseWorldFormat checks that a trace names states, record and flags.
func TestLeaseWorldFormat(t *testing.T) {
	m := leaseModelOf(t, fsm.LeasePolicy, DefaultLeaseBounds(), false)
	var v leaseVars
	v.h[0] = leaseHolder{hs: leasestep.Handle[uint8]{State: policy.StateID(fsm.LeaseRenewing), Token: 2, Call: leasestep.CallRenew, Life: leasestep.LifeHeld,
		Write: leasestep.Write{Generation: 2, Expected: store.Revision(leaseRevCurrent)}}, fcall: leaseFenceWorking, flags: leaseArmed | leaseDue | leaseSeen}
	v.h[1] = leaseHolder{hs: leasestep.Handle[uint8]{State: policy.StateID(fsm.LeaseIdle)}, flags: leaseCrashed}
	v.rec[0] = leaseRecord{gen: 2, by: 1, fence: 1}
	got := m.Format(v.pack())
	for _, want := range []string{"record g2 by h0", "fence held by h0", "h0 Renewing g2, returned, renew of g2 over a current revision in flight, fenced work runs, deadline armed, deadline passed, saw revision", "h1 Idle, crashed"} {
		if !strings.Contains(got, want) {
			t.Errorf("Format gives\n%s\nwithout %q", got, want)
		}
	}
}

// TestLeaseWorldNextAllocatesNothing checks that exploring costs no
// allocation in the world itself.
func TestLeaseWorldNextAllocatesNothing(t *testing.T) {
	for _, b := range []LeaseBounds{DefaultLeaseBounds(), BatchLeaseBounds()} {
		m := leaseModelOf(t, fsm.LeasePolicy, b, true)
		worlds := leaseReachable(t, m)
		sink := func(string, LeaseWorld) {}
		batched := 0
		for j := 0; j < len(worlds); j += max(1, len(worlds)/4000) {
			w := worlds[j]
			if w.unpack().h[0].flags&leaseBatched != 0 {
				batched++
			}
			if n := testing.AllocsPerRun(10, func() { m.Next(w, sink); m.Canonical(w) }); n != 0 {
				t.Fatalf("%s: Next and Canonical allocate %v times on %s", m.Name, n, m.Format(w))
			}
		}
		if b.SecondKey && batched == 0 {
			t.Errorf("%s: no world sampled has a batch in flight", m.Name)
		}
	}
}

// BenchmarkLeaseWorld explores the default bounds with symmetry reduction,
// as the tests do, and reports states per second.
func BenchmarkLeaseWorld(b *testing.B) {
	m := leaseModelOf(b, fsm.LeasePolicy, DefaultLeaseBounds(), true)
	var states int
	var elapsed time.Duration
	for b.Loop() {
		r := modelcheck.Check(m, modelcheck.Options{})
		if r.Verdict != modelcheck.Passed {
			b.Fatal(r.Summary())
		}
		states += r.States
		elapsed += r.Elapsed
	}
	b.ReportMetric(float64(states)/elapsed.Seconds(), "states/s")
}
