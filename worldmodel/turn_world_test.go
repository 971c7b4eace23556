package worldmodel

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// turnModelOf builds the turn world of p within b or fails the test.
func turnModelOf(tb testing.TB, p policy.Policy, b TurnBounds) modelcheck.Model[TurnWorld] {
	tb.Helper()
	m, err := TurnModel(p, b)
	if err != nil {
		tb.Fatalf("TurnModel(%s, %+v): %v", p.Name(), b, err)
	}
	return m
}

// turnTrace renders a counterexample for the test log.
func turnTrace(m modelcheck.Model[TurnWorld], v *modelcheck.Violation[TurnWorld]) string {
	var sb strings.Builder
	if err := v.WriteTrace(&sb, m.Format); err != nil {
		return err.Error()
	}
	return sb.String()
}

func TestTurnWorldPasses(t *testing.T) {
	plain := TurnBounds{Tasks: 3, OtherTakes: 2} // without symmetry, 4 tasks take seconds under -race
	tests := []struct {
		name string
		p    policy.Policy
		b    TurnBounds
	}{
		{"generated", fsm.TurnPolicy, DefaultTurnBounds()},
		{"generated without symmetry", fsm.TurnPolicy, plain},
		{"spec file compiled", specPolicy(t, filepath.Join("..", "spec", "turn.fsm"), nil), DefaultTurnBounds()},
		{"one task", fsm.TurnPolicy, TurnBounds{Tasks: 1, OtherTakes: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := turnModelOf(t, tt.p, tt.b)
			r := modelcheck.Check(m, modelcheck.Options{})
			t.Logf("%+v: %s", tt.b, r.Summary())
			if r.Verdict != modelcheck.Passed {
				if r.Violation != nil {
					t.Log(turnTrace(m, r.Violation))
				}
				t.Fatalf("verdict %v, want passed", r.Verdict)
			}
		})
	}
}

// turnMutations are edited copies of spec/turn.fsm, each seeding one bug,
// with the property that catches it and the number of moves of the
// shortest counterexample.
var turnMutations = []struct {
	file     string
	property string
	steps    int
}{
	{"turn-abort-keeps-place.fsm", TurnMoveAbortOrder, 4},
	{"turn-nowait-queues.fsm", TurnMoveHeldAtOnce, 2},
	{"turn-failure-keeps-turn.fsm", TurnInvTurnPassed, 2},
	{"turn-release-keeps-lock.fsm", TurnInvLockHeld, 3},
	{"turn-retry-requeues.fsm", TurnInvArrival, 5},
	{"turn-acquired-passes.fsm", TurnInvOneAtLock, 3},
	{"turn-failure-returns-cause.fsm", TurnInvReturns, 2},
	{"turn-backoff-rejects-abort.fsm", TurnInvNoPanic, 5},
	{"turn-owner-queues.fsm", TurnInvQueue, 1},
}

func TestTurnMutationsCaught(t *testing.T) {
	for _, mu := range turnMutations {
		p := specPolicy(t, filepath.Join("testdata", "mutations", mu.file), nil)
		for _, sym := range []bool{true, false} {
			b := DefaultTurnBounds()
			b.Symmetric = sym
			name := strings.TrimSuffix(mu.file, ".fsm")
			if !sym {
				name += " without symmetry"
			}
			t.Run(name, func(t *testing.T) {
				m := turnModelOf(t, p, b)
				r := modelcheck.Check(m, modelcheck.Options{})
				if r.Verdict != modelcheck.Violated {
					t.Fatalf("%s: verdict %v, want violated", r.Summary(), r.Verdict)
				}
				wantStory(t, m, r.Violation)
				wantParallelSame(t, m, modelcheck.Options{}, r)
				got := len(r.Violation.Trace) - 1
				if r.Violation.Property != mu.property || got != mu.steps {
					t.Log(turnTrace(m, r.Violation))
					t.Fatalf("violation of %q after %d moves, want %q after %d", r.Violation.Property, got, mu.property, mu.steps)
				}
			})
		}
	}
}

// turnMutationFiles lists the turn mutations on disk, so that a new file
// cannot be forgotten in turnMutations.
func TestTurnMutationsListed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "mutations", "turn-*.fsm"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, mu := range turnMutations {
		listed[mu.file] = true
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "# mutation:") {
			t.Errorf("%s does not say what bug it seeds (# mutation:)", f)
		}
		if !listed[filepath.Base(f)] {
			t.Errorf("%s is not in turnMutations", f)
		}
		delete(listed, filepath.Base(f))
	}
	for f := range listed {
		t.Errorf("turnMutations lists %s, which does not exist", f)
	}
}

func TestTurnModelRejectsBadInput(t *testing.T) {
	tests := []struct {
		p     policy.Policy
		b     TurnBounds
		field string // "" for a policy error
	}{
		{fsm.TurnPolicy, TurnBounds{Tasks: 0}, "Tasks"},
		{fsm.TurnPolicy, TurnBounds{Tasks: TurnMaxTasks + 1}, "Tasks"},
		{fsm.TurnPolicy, TurnBounds{Tasks: 2, OtherTakes: -1}, "OtherTakes"},
		{fsm.TurnPolicy, TurnBounds{Tasks: 2, OtherTakes: 9}, "OtherTakes"},
		{fsm.LanePolicy, DefaultTurnBounds(), ""},
	}
	for _, tt := range tests {
		_, err := TurnModel(tt.p, tt.b)
		want := tt.field
		if want == "" {
			want = "Policy"
		}
		var me *ModelError
		if !errors.As(err, &me) || me.Field != want || me.Family != "turn" {
			t.Errorf("TurnModel(%s, %+v) = %v, want a *ModelError for %s", tt.p.Name(), tt.b, err, want)
		}
	}
}

// turnWalk follows moves by label from the first initial world whose task
// flags are mix, failing the test when a label is not a move.
func turnWalk(tb testing.TB, m modelcheck.Model[TurnWorld], mix []turnFlags, labels ...string) TurnWorld {
	tb.Helper()
	var w TurnWorld
	found := false
	for _, iw := range m.Init {
		match := true
		for i, f := range mix {
			match = match && iw.tasks[i].flags == f
		}
		if match {
			w, found = iw, true
			break
		}
	}
	if !found {
		tb.Fatalf("no initial world with task flags %v", mix)
	}
	for _, l := range labels {
		var next TurnWorld
		ok := false
		m.Next(w, func(label string, nw TurnWorld) {
			if label == l && !ok {
				next, ok = nw, true
			}
		})
		if !ok {
			tb.Fatalf("no move %q from\n%s", l, m.Format(w))
		}
		w = next
	}
	return w
}

const turnWaitCancel = turnWait | turnCancellable

// TestTurnInvariantsCanFail breaks each invariant in a world crafted from a
// reachable one, and requires it to hold in that reachable one.
func TestTurnInvariantsCanFail(t *testing.T) {
	m := turnModelOf(t, fsm.TurnPolicy, TurnBounds{Tasks: 4, Symmetric: false})
	mix := []turnFlags{turnWaitCancel, turnWaitCancel, turnWaitCancel, turnWaitCancel}
	// t0 attempts, t1 and t2 wait in that order; t3 has not started.
	base := turnWalk(t, m, mix, "t0 Acquire", "t1 Acquire", "t2 Acquire")
	tests := []struct {
		property string
		edit     func(w *TurnWorld)
	}{
		{TurnInvNoPanic, func(w *TurnWorld) { w.setPanic(turnPanicRejected, 1, turnTrBusy, w.tasks[1].state) }},
		{TurnInvOneAtLock, func(w *TurnWorld) { w.tasks[3].flags |= turnHeldLock; w.tasks[3].phase = turnHolding }},
		{TurnInvArrival, func(w *TurnWorld) {
			q := w.queue(w.reg)
			q.owner, q.waiting[0], q.waiting[1] = 3, 0, 1 // t2 owns the turn, t0 and t1 wait
			w.tasks[0].phase, w.tasks[2].phase = turnWaitTurn, turnAttempting
		}},
		{TurnInvQueue, func(w *TurnWorld) { w.queue(w.reg).remove(2) }},
		{TurnInvTurnPassed, func(w *TurnWorld) { w.tasks[0].phase = turnGotError }},
		{TurnInvLockHeld, func(w *TurnWorld) { w.tasks[0].phase = turnHolding }},
		{TurnInvReturns, func(w *TurnWorld) { w.tasks[3].phase = turnGotNil }},
	}
	for _, tt := range tests {
		t.Run(tt.property, func(t *testing.T) {
			check := turnInvariant(t, m, tt.property)
			if err := check(base); err != nil {
				t.Fatalf("fails in a reachable world: %v\n%s", err, m.Format(base))
			}
			w := base
			tt.edit(&w)
			err := check(w)
			if err == nil {
				t.Fatalf("holds in\n%s", m.Format(w))
			}
			t.Log(err)
		})
	}
}

func turnInvariant(tb testing.TB, m modelcheck.Model[TurnWorld], name string) func(TurnWorld) error {
	tb.Helper()
	for _, inv := range m.Invariants {
		if inv.Name == name {
			return inv.Check
		}
	}
	tb.Fatalf("no invariant %q", name)
	return nil
}

func turnMoveInvariant(tb testing.TB, m modelcheck.Model[TurnWorld], name string) func(TurnWorld, string, TurnWorld) error {
	tb.Helper()
	for _, inv := range m.Moves {
		if inv.Name == name {
			return inv.Check
		}
	}
	tb.Fatalf("no move invariant %q", name)
	return nil
}

// TestTurnAbortOrderCanFail aborts t1 out of the queue [t1 t2 t3] behind
// t0 and tampers with what the others do meanwhile.
func TestTurnAbortOrderCanFail(t *testing.T) {
	m := turnModelOf(t, fsm.TurnPolicy, TurnBounds{Tasks: 4, Symmetric: false})
	mix := []turnFlags{turnWaitCancel, turnWaitCancel, turnWaitCancel, turnWaitCancel}
	from := turnWalk(t, m, mix, "t0 Acquire", "t1 Acquire", "t2 Acquire", "t3 Acquire", "t1 ctx ends")
	label := "t1 wakes: ctx done, Abort"
	good := turnWalk(t, m, mix, "t0 Acquire", "t1 Acquire", "t2 Acquire", "t3 Acquire", "t1 ctx ends", label)
	check := turnMoveInvariant(t, m, TurnMoveAbortOrder)
	if err := check(from, label, good); err != nil {
		t.Fatalf("fails on a real abort: %v", err)
	}
	tests := []struct {
		name string
		edit func(q *turnQueue)
	}{
		{"stays", func(q *turnQueue) { q.waiting[2], q.n = 1, 3 }},
		{"reorders", func(q *turnQueue) { q.waiting[0], q.waiting[1] = 3, 2 }},
		{"drops another", func(q *turnQueue) { q.n = 1 }},
		{"keeps the turn", func(q *turnQueue) { q.owner = 2 }},
		{"another jumps the queue", func(q *turnQueue) { q.owner, q.n = 4, 1 }},
	}
	for _, tt := range tests {
		to := good
		tt.edit(to.queue(to.tasks[2].queue))
		err := check(from, label, to)
		if err == nil {
			t.Errorf("%s: holds", tt.name)
			continue
		}
		t.Logf("%s: %v", tt.name, err)
	}
	// A new waiter joining at the abort is caught too.
	joined := turnWalk(t, m, mix, "t0 Acquire", "t1 Acquire", "t2 Acquire", "t1 ctx ends")
	to := turnWalk(t, m, mix, "t0 Acquire", "t1 Acquire", "t2 Acquire", "t1 ctx ends", label, "t3 Acquire")
	if err := check(joined, label, to); err == nil {
		t.Error("a waiter that joins at the abort goes unnoticed")
	}
}

func TestTurnHeldAtOnceCanFail(t *testing.T) {
	m := turnModelOf(t, fsm.TurnPolicy, TurnBounds{Tasks: 2, Symmetric: false})
	mix := []turnFlags{0, 0}
	from := turnWalk(t, m, mix, "t0 Acquire")
	to := turnWalk(t, m, mix, "t0 Acquire", "t1 Acquire")
	check := turnMoveInvariant(t, m, TurnMoveHeldAtOnce)
	if err := check(from, "t1 Acquire", to); err != nil {
		t.Fatalf("fails on a real held error: %v", err)
	}
	to.tasks[1].phase = turnWaitTurn
	if err := check(from, "t1 Acquire", to); err == nil {
		t.Fatal("a call without wait that waits goes unnoticed")
	}
}

func TestTurnOwes(t *testing.T) {
	m := turnModelOf(t, fsm.TurnPolicy, TurnBounds{Tasks: 2, Symmetric: false})
	mix := []turnFlags{turnWait, turnWait}
	done := turnWalk(t, m, mix, "t0 Acquire", "t1 Acquire", "t0 attempt: AttemptFailed", "t1 wakes: turn handed over", "t1 attempt: AttemptFailed")
	if owed := m.Owes(done); owed != "" {
		t.Fatalf("every call returned, yet owes %q\n%s", owed, m.Format(done))
	}
	// t0 returned an error without passing the turn on: t1, whose
	// context cannot end, waits for ever.
	stuck := turnWalk(t, m, mix, "t0 Acquire", "t1 Acquire")
	stuck.tasks[0] = turnTask{state: policy.StateID(fsm.TurnFailed), phase: turnGotError, queue: stuck.tasks[0].queue}
	moves := 0
	m.Next(stuck, func(string, TurnWorld) { moves++ })
	owed := m.Owes(stuck)
	if moves != 0 || owed == "" {
		t.Fatalf("%d moves, owes %q; want none and a debt\n%s", moves, owed, m.Format(stuck))
	}
	t.Log(owed)
}

// TestTurnCanonical explores the world without symmetry by hand and
// requires the canonical forms of its worlds to be exactly the worlds the
// symmetric model reaches.
func TestTurnCanonical(t *testing.T) {
	b := TurnBounds{Tasks: 3, OtherTakes: 1}
	plain := turnReachable(turnModelOf(t, fsm.TurnPolicy, b))
	b.Symmetric = true
	sm := turnModelOf(t, fsm.TurnPolicy, b)
	sym := turnReachable(sm)
	canon := map[TurnWorld]bool{}
	for w := range plain {
		c := sm.Canonical(w)
		if sm.Canonical(c) != c {
			t.Fatalf("Canonical is not idempotent on\n%s", sm.Format(w))
		}
		canon[c] = true
	}
	if len(canon) != len(sym) {
		t.Fatalf("%d canonical forms of %d plain worlds, but the symmetric model reaches %d", len(canon), len(plain), len(sym))
	}
	for w := range sym {
		if !canon[w] {
			t.Fatalf("the symmetric model reaches a world no plain world maps to:\n%s", sm.Format(w))
		}
	}
	t.Logf("%d plain worlds, %d classes", len(plain), len(sym))
}

// turnReachable is a plain search of every world m reaches.
func turnReachable(m modelcheck.Model[TurnWorld]) map[TurnWorld]bool {
	canon := func(w TurnWorld) TurnWorld {
		if m.Canonical != nil {
			return m.Canonical(w)
		}
		return w
	}
	seen := map[TurnWorld]bool{}
	var todo []TurnWorld
	for _, w := range m.Init {
		if w = canon(w); !seen[w] {
			seen[w] = true
			todo = append(todo, w)
		}
	}
	for len(todo) > 0 {
		w := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		m.Next(w, func(_ string, nw TurnWorld) {
			if nw = canon(nw); !seen[nw] {
				seen[nw] = true
				todo = append(todo, nw)
			}
		})
	}
	return seen
}

// TestTurnWorldCoversSpec requires every row of spec/turn.fsm to fire in
// the world, except Idle --Abort: plock looks at the context before the
// Request and never steps a task that has not started. No ignored pair is
// ever hit either: plock fires Abort only at a task that waits (in the
// queue or a backoff), Retry only from a backoff, Release once.
func TestTurnWorldCoversSpec(t *testing.T) {
	rec := newStepRecorder(fsm.TurnPolicy)
	r := modelcheck.Check(turnModelOf(t, rec, DefaultTurnBounds()), modelcheck.Options{})
	if r.Verdict != modelcheck.Passed {
		t.Fatal(r.Summary())
	}
	idle, _ := fsm.TurnPolicy.Table().State("Idle")
	abort, _ := fsm.TurnPolicy.Table().Trigger("Abort")
	for _, row := range fsm.TurnPolicy.Table().Rows {
		dead := row.From == idle && row.Trigger == abort
		if rec.fired[row.Line] == dead {
			t.Errorf("turn.fsm:%d fired %v, want %v", row.Line, rec.fired[row.Line], !dead)
		}
	}
	for p := range rec.ignored {
		t.Errorf("plock fires %s in %s, which the spec ignores", fsm.TurnPolicy.Table().Triggers[p.Trigger].Name, fsm.TurnPolicy.Table().States[p.State].Name)
	}
}

// TestTurnHandedTurnBeatsCancel pins a race plock resolves in favour of
// the turn: a waiter whose context ends just before the turn is handed to
// it still attempts, and may return a Lock although its context is done.
func TestTurnHandedTurnBeatsCancel(t *testing.T) {
	m := turnModelOf(t, fsm.TurnPolicy, TurnBounds{Tasks: 2})
	w := turnWalk(t, m, []turnFlags{0, turnWaitCancel}, "t0 Acquire", "t1 Acquire", "t1 ctx ends",
		"t0 attempt: AttemptFailed", "t1 wakes: turn handed over", "t1 attempt: Acquired")
	if got := w.tasks[1]; got.phase != turnHolding || got.flags&turnCtxDone == 0 {
		t.Fatalf("t1 did not get the lock with its context done:\n%s", m.Format(w))
	}
}

// TestTurnRequeuedTaskGetsAFreshTurn: a custom policy may let a task wait
// for the turn a second time (here: back to the queue after each backoff).
// plock gives each wait a fresh turn signal, so the task never wakes on
// its first turn's closed channel to run that turn's outputs again, and
// the turn is never handed to it twice on one signal. (The world once
// modelled one-shot signals, as plock had them, and pinned that hazard
// here; running plock's own step code, it finds none.) The family's
// arrival order still fails this policy: see turnMutations.
func TestTurnRequeuedTaskGetsAFreshTurn(t *testing.T) {
	p := specPolicy(t, filepath.Join("testdata", "mutations", "turn-retry-requeues.fsm"), nil)
	m := turnModelOf(t, p, TurnBounds{Tasks: 3, OtherTakes: 1})
	for _, property := range []string{TurnInvOneAtLock, TurnInvNoPanic} {
		only := m
		only.Invariants, only.Moves, only.Owes = nil, nil, nil
		for _, inv := range m.Invariants {
			if inv.Name == property {
				only.Invariants = append(only.Invariants, inv)
			}
		}
		if r := modelcheck.Check(only, modelcheck.Options{MaxStates: testMaxStates}); r.Verdict != modelcheck.Passed {
			if r.Violation != nil {
				t.Log(turnTrace(m, r.Violation))
			}
			t.Errorf("%s: %s, want passed", property, r.Summary())
		}
	}
}

func TestTurnFormat(t *testing.T) {
	m := turnModelOf(t, fsm.TurnPolicy, TurnBounds{Tasks: 3})
	w := turnWalk(t, m, []turnFlags{turnWait, turnWait, turnWait}, "t0 Acquire", "t1 Acquire", "t2 Acquire")
	got := m.Format(w)
	for _, want := range []string{"q1 owner t0 waiting [t1 t2]", "t0 attempts (state Attempting)", "t2 waits for the turn (state Waiting), wait"} {
		if !strings.Contains(got, want) {
			t.Errorf("Format lacks %q:\n%s", want, got)
		}
	}
}

func TestTurnNextAllocatesNothing(t *testing.T) {
	m := turnModelOf(t, fsm.TurnPolicy, DefaultTurnBounds())
	mix := []turnFlags{turnWait, turnWaitCancel, turnWaitCancel}
	worlds := []TurnWorld{
		m.Init[0],
		turnWalk(t, m, mix, "t0 Acquire", "t1 Acquire", "t2 Acquire"),
		turnWalk(t, m, mix, "other process takes the lock", "t0 Acquire", "t0 attempt: Busy", "t1 Acquire", "t2 ctx ends"),
	}
	moves := 0
	yield := func(_ string, w TurnWorld) { moves += int(m.Canonical(w).n) }
	allocs := testing.AllocsPerRun(100, func() {
		for _, w := range worlds {
			m.Next(w, yield)
		}
	})
	if allocs != 0 || moves == 0 {
		t.Fatalf("Next and Canonical allocate %v times a run (%d moves)", allocs, moves)
	}
}

// BenchmarkTurnWorld checks the shipped policy at the default bounds and
// reports the states explored per second.
func BenchmarkTurnWorld(b *testing.B) {
	m := turnModelOf(b, fsm.TurnPolicy, DefaultTurnBounds())
	states := 0
	start := time.Now()
	for b.Loop() {
		r := modelcheck.Check(m, modelcheck.Options{})
		if r.Verdict != modelcheck.Passed {
			b.Fatal(r.Summary())
		}
		states += r.States
	}
	b.ReportMetric(float64(states)/time.Since(start).Seconds(), "states/s")
}
