package leasestep_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/policy"
	"github.com/rivus/collab/worldmodel"
)

// env records what the step asks for; its clock is a counter of steps.
type env struct {
	now     int
	sight   store.Revision
	sighted bool
	silent  bool
	did     []string
	armedAt int
	fault   leasestep.Fault
}

func (e *env) Now() int                         { return e.now }
func (e *env) Sighting() (store.Revision, bool) { return e.sight, e.sighted }
func (e *env) Sight(rev store.Revision) {
	e.sight, e.sighted, e.silent = rev, true, false
	e.do("sight")
}
func (e *env) Unsight()             { e.sight, e.sighted, e.silent = 0, false, false; e.do("unsight") }
func (e *env) Silent() bool         { return e.silent }
func (e *env) StopTimers()          { e.do("stopTimers") }
func (e *env) ArmDeadline(from int) { e.armedAt = from; e.do("armDeadline") }
func (e *env) ScheduleRenew()       { e.do("scheduleRenew") }
func (e *env) ScheduleRetry()       { e.do("scheduleRetry") }
func (e *env) DeclareLost()         { e.do("declareLost") }
func (e *env) AnswerFence(run bool) {
	if run {
		e.do("run")
	} else {
		e.do("refuse")
	}
}
func (e *env) Acquired()                                                     { e.do("acquired") }
func (e *env) HeldError()                                                    { e.do("heldError") }
func (e *env) RepoError()                                                    { e.do("repoError") }
func (e *env) EndHandle()                                                    { e.do("endHandle") }
func (e *env) Fault(f leasestep.Fault, _ policy.TriggerID, _ policy.Outputs) { e.fault = f }

func (e *env) do(what string) { e.did = append(e.did, what) }

// took returns what the step did since the last call, and forgets it.
func (e *env) took() []string {
	d := e.did
	e.did = nil
	return d
}

func want(t *testing.T, e *env, what ...string) {
	t.Helper()
	if got := e.took(); !slices.Equal(got, what) {
		t.Fatalf("the step did %v, want %v", got, what)
	}
}

// TestAcquireRenewRelease drives one handle through the shipped policy:
// the writes the step asks for, where the deadline starts, and what each
// answer fires.
func TestAcquireRenewRelease(t *testing.T) {
	p := fsm.LeasePolicy
	e := &env{}
	h := &leasestep.Handle[int]{State: p.Initial()}
	leasestep.Acquire(p, e, h)
	if h.Call != leasestep.CallLoad || h.Life != leasestep.LifeAcquiring {
		t.Fatalf("after Acquire: call %v, life %v; want a load while acquiring", h.Call, h.Life)
	}
	// A tombstone of generation 4 at revision 9: the claim writes 5 over 9.
	e.now = 1
	s := leasestep.Answered(p, e, h, leasestep.Answer{Rec: leasestep.Record{Revision: 9, Generation: 4, Free: true}})
	want(t, e, "unsight")
	if s.Facts != policy.LeaseFactRecordFree || h.Call != leasestep.CallClaim || h.Write != (leasestep.Write{Generation: 5, Expected: 9}) || h.Token != 5 {
		t.Fatalf("after loading a tombstone: facts %v, call %v, write %+v, token %d", s.Facts, h.Call, h.Write, h.Token)
	}
	// The claim started at 1 and is answered at 3: the deadline counts
	// from 1.
	e.now = 3
	leasestep.Answered(p, e, h, leasestep.Answer{Rev: 10})
	want(t, e, "unsight", "armDeadline", "scheduleRenew", "acquired")
	if e.armedAt != 1 || h.Wrote != 10 || h.Life != leasestep.LifeHeld {
		t.Fatalf("after the claim: deadline from %d, wrote %d, life %v; want from 1, 10, held", e.armedAt, h.Wrote, h.Life)
	}
	// A renewal writes the token over the handle's own last write.
	e.now = 5
	leasestep.RenewDue(p, e, h)
	if h.Call != leasestep.CallRenew || h.Write != (leasestep.Write{Generation: 5, Expected: 10}) {
		t.Fatalf("after RenewDue: call %v, write %+v; want a renewal of 5 over 10", h.Call, h.Write)
	}
	leasestep.Answered(p, e, h, leasestep.Answer{Result: leasestep.Failed})
	want(t, e, "scheduleRetry")
	leasestep.RenewDue(p, e, h)
	leasestep.Answered(p, e, h, leasestep.Answer{Rev: 11})
	want(t, e, "armDeadline", "scheduleRenew")
	// Close: the tombstone keeps the generation, over the revision read.
	leasestep.Release(p, e, h)
	leasestep.Answered(p, e, h, leasestep.Answer{Rec: leasestep.Record{Revision: 11, Generation: 5}})
	if h.Call != leasestep.CallTombstone || h.Write != (leasestep.Write{Generation: 5, Released: true, Expected: 11}) {
		t.Fatalf("after Close's read: call %v, write %+v; want a tombstone of 5 over 11", h.Call, h.Write)
	}
	leasestep.Answered(p, e, h, leasestep.Answer{Rev: 12})
	want(t, e, "stopTimers", "endHandle")
	if h.Life != leasestep.LifeEnded || e.fault != 0 {
		t.Fatalf("after the tombstone: life %v, fault %v", h.Life, e.fault)
	}
}

// TestConflictOnRenewalIsLoss: a renewal's conflict declares the lease
// lost at once, and a fence taken then is refused.
func TestConflictOnRenewalIsLoss(t *testing.T) {
	p := fsm.LeasePolicy
	e := &env{}
	h := held(t, p, e)
	leasestep.RenewDue(p, e, h)
	leasestep.Answered(p, e, h, leasestep.Answer{Result: leasestep.Conflict})
	want(t, e, "declareLost")
	if !h.Lost {
		t.Fatal("a renewal's conflict left the handle not lost")
	}
	leasestep.FenceTaken(p, e, h, leasestep.Record{Revision: 3, Generation: h.Token})
	want(t, e, "refuse")
}

// TestSightings: an acquisition's read notes a revision the first time
// it sees it, keeps the note while the revision stays, and is silent only
// once the edge says the TTL has passed since; a claim that succeeds
// forgets the note, so that the next holder's revision is noted afresh.
func TestSightings(t *testing.T) {
	p := fsm.LeasePolicy
	live := leasestep.Record{Revision: 7, Generation: 2, Liveness: platform.Remote}
	renewed := live
	renewed.Revision = 9
	e := &env{}
	for i, tc := range []struct {
		rec    leasestep.Record
		silent bool
		facts  policy.Facts
		did    []string
	}{
		{live, false, 0, []string{"sight", "heldError"}},    // a remote holder is not dead
		{renewed, false, 0, []string{"sight", "heldError"}}, // a new revision is noted afresh
		{renewed, true, policy.LeaseFactTtlElapsed, nil},    // the note is kept: silent, claimed
		{leasestep.Record{Revision: 8, Generation: 2, Liveness: platform.Dead}, false, policy.LeaseFactHolderDead | policy.LeaseFactHolderLocal, []string{"sight"}},
		{leasestep.Record{Revision: 10, Generation: 2, Liveness: platform.Alive}, false, policy.LeaseFactHolderLocal, []string{"sight", "heldError"}},   // a live holder here is local
		{leasestep.Record{Revision: 11, Generation: 2, Liveness: platform.Unknown}, false, policy.LeaseFactHolderLocal, []string{"sight", "heldError"}}, // not to be inspected, yet here

	} {
		h := &leasestep.Handle[int]{State: p.Initial()}
		leasestep.Acquire(p, e, h)
		e.silent = tc.silent
		s := leasestep.Answered(p, e, h, leasestep.Answer{Rec: tc.rec})
		if s.Facts != tc.facts {
			t.Fatalf("read %d: facts %v, want %v", i, s.Facts, tc.facts)
		}
		if got := e.took(); !slices.Equal(got, tc.did) {
			t.Fatalf("read %d did %v, want %v", i, got, tc.did)
		}
		if h.Call == leasestep.CallClaim {
			leasestep.Answered(p, e, h, leasestep.Answer{Rev: 20})
			want(t, e, "unsight", "armDeadline", "scheduleRenew", "acquired")
		}
	}
}

// TestMisplacedOutputsAreFaults: a policy that asks for a load while its
// renewal is in flight, or answers FenceTaken with nothing, does not fit
// the runtime: the step reports the fault and stops.
func TestMisplacedOutputsAreFaults(t *testing.T) {
	src, err := os.ReadFile("../../worldmodel/testdata/mutations/lease-renew-reloads.fsm")
	if err != nil {
		t.Fatal(err)
	}
	bad, err := worldmodel.SpecPolicy("lease-renew-reloads.fsm", src)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{}
	h := held(t, bad, e)
	leasestep.RenewDue(bad, e, h)
	if e.fault != leasestep.SecondCall {
		t.Fatalf("renew and load at once: fault %v, want %v", e.fault, leasestep.SecondCall)
	}
	if !strings.Contains(e.fault.String(), "repository call while one is in flight") {
		t.Errorf("the fault reads %q", e.fault)
	}
}

// held returns a handle of p that holds generation 1 at revision 1.
func held(t *testing.T, p policy.Policy, e *env) *leasestep.Handle[int] {
	t.Helper()
	h := &leasestep.Handle[int]{State: p.Initial()}
	leasestep.Acquire(p, e, h)
	leasestep.Answered(p, e, h, leasestep.Answer{Rec: leasestep.Record{Free: true}})
	leasestep.Answered(p, e, h, leasestep.Answer{Rev: 1})
	if h.Life != leasestep.LifeHeld {
		t.Fatalf("the acquisition did not hold: life %v, fault %v", h.Life, e.fault)
	}
	e.took()
	return h
}

// TestBatch: the renewals due together are collected in order, a handle
// busy with a Close's read consumes its timer and writes nothing, and
// each member of a batch is answered with its own write's answer, so that
// one key's conflict is a loss beside another key's success.
func TestBatch(t *testing.T) {
	p := fsm.LeasePolicy
	es := []*env{{}, {}, {}}
	var due []leasestep.Member[int, *env]
	for _, e := range es {
		due = append(due, leasestep.Member[int, *env]{Env: e, H: held(t, p, e)})
	}
	leasestep.Release(p, es[1], due[1].H) // busy: Close's read in flight
	es[1].took()
	batch := leasestep.CollectDue(p, slices.Clone(due), nil)
	if len(batch) != 2 || batch[0].H != due[0].H || batch[1].H != due[2].H {
		t.Fatalf("collected %d renewals, want the first and the third", len(batch))
	}
	if due[1].H.Call != leasestep.CallLoad {
		t.Fatalf("the busy handle's call is %v, want its read still in flight", due[1].H.Call)
	}
	var heard []int
	leasestep.AnswerBatch(p, batch, []leasestep.Answer{{Result: leasestep.Conflict}, {Rev: 2}}, func(i int, s leasestep.Step) {
		heard = append(heard, i)
	})
	if !slices.Equal(heard, []int{0, 1}) {
		t.Fatalf("heard the steps of members %v, want 0 and 1", heard)
	}
	want(t, es[0], "declareLost")
	want(t, es[2], "armDeadline", "scheduleRenew")
	if !batch[0].H.Lost || batch[1].H.Lost || batch[1].H.Wrote != 2 {
		t.Fatalf("after the batch: first lost %v, second lost %v and wrote %d; want the first lost, the second renewed at 2",
			batch[0].H.Lost, batch[1].H.Lost, batch[1].H.Wrote)
	}
}
