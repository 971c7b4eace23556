package worldmodel

import (
	"testing"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/modelcheck"
)

// TestLeaseBatchWorldPasses checks the shipped policy where one manager
// holds two keys and renews them in one batch (no holders there are
// interchangeable: symmetry reduction changes nothing), and that the
// search reaches a batch whose writes meet different answers: one key's
// conflict or failure beside the other's success.
func TestLeaseBatchWorldPasses(t *testing.T) {
	m := leaseModelOf(t, fsm.LeasePolicy, BatchLeaseBounds(), true)
	moves := map[string]bool{}
	inner := m.Next
	m.Next = func(w LeaseWorld, yield func(string, LeaseWorld)) {
		inner(w, func(label string, to LeaseWorld) {
			moves[label] = true
			yield(label, to)
		})
	}
	r := leaseRun(m)
	if r.Verdict != modelcheck.Passed {
		t.Fatalf("%s\n%s", r.Summary(), leaseTrace(m, r))
	}
	t.Log(r.Summary())
	lm, err := newLeaseModel(fsm.LeasePolicy, BatchLeaseBounds())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range [][2]int{{leaseOutSaved, leaseOutConflict}, {leaseOutConflict, leaseOutSaved}, {leaseOutSaved, leaseOutFailed}, {leaseOutFailedApplied, leaseOutSaved}} {
		label := lm.labels[0][leaseMvBatch+leaseMove(o[0]*leaseOutcomes+o[1])]
		if !moves[label] {
			t.Errorf("no world reaches %q", label)
		}
	}
}

// TestLeaseBatchWorldCanonical checks Canonical in a world with a second
// key: h0, which shares its process with h0/b, is never swapped, and a
// mirror image of the holders that are interchangeable maps to one world.
func TestLeaseBatchWorldCanonical(t *testing.T) {
	b := BatchLeaseBounds()
	b.Holders, b.Remote = 3, 0
	m := leaseModelOf(t, fsm.LeasePolicy, b, true)
	worlds := leaseFirstWorlds(t, leaseModelOf(t, fsm.LeasePolicy, b, false), 60_000)
	swap := [LeaseMaxHolders + 1]uint8{0, 1, 3, 2, 4} // h1 and h2
	batched := 0
	for _, w := range worlds {
		c := m.Canonical(w)
		if m.Canonical(c) != c {
			t.Fatalf("Canonical is not idempotent on %s", m.Format(w))
		}
		if c.holder(0) != w.holder(0) || c.holder(3) != w.holder(3) {
			t.Fatalf("Canonical moved h0 or h0/b in %s", m.Format(w))
		}
		v := w.unpack()
		if v.h[0].flags&leaseBatched != 0 && v.h[1] != v.h[2] {
			batched++
		}
		s := v
		s.h[1], s.h[2] = v.h[2], v.h[1]
		for k := range s.rec {
			s.rec[k].by, s.rec[k].fence = swap[v.rec[k].by], swap[v.rec[k].fence]
		}
		s.faultAt = swap[v.faultAt]
		if got := m.Canonical(s.pack()); got != c {
			t.Fatalf("the mirror of %s\nis canonically %s,\nnot %s", m.Format(w), m.Format(got), m.Format(c))
		}
	}
	if batched == 0 {
		t.Error("no world checked has a batch in flight beside two holders that differ")
	}
}
