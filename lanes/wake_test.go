package lanes

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rivus/collab/fsm"
)

// w is one wake of a sequence and the answer it must get.
type w struct {
	key  string
	want any // WakeResult or error
}

// Wake's answers depend only on the lanes' state when it is called, and
// no activation below ends: each sequence is deterministic.
func TestWakeResults(t *testing.T) {
	tests := []struct {
		name          string
		maxConcurrent int
		maxQueued     int
		wakes         []w
	}{
		{"idle lanes start while a slot is free", 2, 0, []w{
			{"a", Started}, {"b", Started}, {"c", Queued}}},
		{"a waiting lane changes nothing", 1, 0, []w{
			{"a", Started}, {"b", Queued}, {"b", Coalesced}, {"b", Coalesced}}},
		{"a running lane owes one follow-up", 1, 0, []w{
			{"a", Started}, {"a", Queued}, {"a", Coalesced}, {"a", Coalesced}}},
		{"queue full", 1, 2, []w{
			{"a", Started}, {"b", Queued}, {"c", Queued}, {"d", ErrQueueFull},
			{"b", Coalesced}, {"a", ErrQueueFull}, {"d", ErrQueueFull}}},
		{"an owed follow-up takes a queue place", 1, 1, []w{
			{"a", Started}, {"a", Queued}, {"b", ErrQueueFull}, {"a", Coalesced}}},
		{"a follow-up needs a place of its own", 2, 1, []w{
			{"a", Started}, {"b", Started}, {"a", Queued}, {"b", ErrQueueFull}}},
		{"NoQueue refuses what cannot start at once", 1, NoQueue, []w{
			{"a", Started}, {"b", ErrQueueFull}, {"a", ErrQueueFull}, {"b", ErrQueueFull}}},
		{"NoQueue starts while a slot is free", 2, NoQueue, []w{
			{"a", Started}, {"b", Started}, {"c", ErrQueueFull}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate[string]()
			l := newLanes(t, g.config(tt.maxConcurrent, tt.maxQueued))
			for _, w := range tt.wakes {
				wakeWant(t, l, w.key, w.want)
			}
		})
	}
}

// Without MaxQueued the queue is unbounded but holds each key once, and
// waking a waiting lane changes nothing; a refused wake leaves no entry.
func TestQueueBookkeeping(t *testing.T) {
	g := newGate[string]()
	l := newLanes(t, g.config(1, 0))
	wakeWant(t, l, "run", Started)
	var keys []string
	for i := range 1000 {
		keys = append(keys, fmt.Sprint("k", i))
		wakeWant(t, l, keys[i], Queued)
	}
	before := l.snapshot()
	for range 3 {
		for _, k := range keys {
			wakeWant(t, l, k, Coalesced)
		}
	}
	after := l.snapshot()
	if !slices.Equal(after.queue, keys) {
		t.Errorf("queue after coalesced wakes = %d entries, want the 1000 keys once each in wake order", len(after.queue))
	}
	if after.reserved != before.reserved || after.running != 1 || len(after.states) != 1001 {
		t.Errorf("bookkeeping changed by coalesced wakes: %+v -> reserved %d, running %d, %d lanes",
			before.reserved, after.reserved, after.running, len(after.states))
	}
	wakeWant(t, l, "run", Queued)
	wakeWant(t, l, "run", Coalesced)
	s := l.snapshot()
	if s.reserved != 1 || len(s.queue) != 1000 || s.states["run"] != fsm.LaneRunningOwed {
		t.Errorf("after waking the running lane: reserved %d, queue %d, state %v; want 1, 1000, RunningOwed",
			s.reserved, len(s.queue), s.states["run"])
	}
}

func TestRefusedWakeLeavesNoEntry(t *testing.T) {
	g := newGate[string]()
	l := newLanes(t, g.config(1, NoQueue))
	wakeWant(t, l, "a", Started)
	wakeWant(t, l, "b", ErrQueueFull)
	s := l.snapshot()
	if _, ok := s.states["b"]; ok || len(s.states) != 1 || len(s.queue) != 0 || s.reserved != 0 {
		t.Errorf("after a refused wake: %+v; want only a's lane", s)
	}
}

// A freed slot goes to the lane that waited longest, and a lane woken
// while it ran goes to the back of the queue when its activation ends:
// behind c, which was woken after it.
func TestQueueOrder(t *testing.T) {
	g := newGate[string]()
	l := newLanes(t, g.config(1, 0))
	wakeWant(t, l, "x", Started)
	g.nextStart(t, "x")
	for _, w := range []w{
		{"a", Queued}, {"b", Queued}, {"x", Queued}, {"c", Queued},
		{"a", Coalesced}, {"x", Coalesced}, {"c", Coalesced},
	} {
		wakeWant(t, l, w.key, w.want)
	}
	g.release("x")
	g.nextExit(t, "x")
	for _, k := range []string{"a", "b", "c", "x"} {
		g.nextStart(t, k)
		notYet(t, g.starts, "a second activation with one slot")
		g.release(k)
		if e := g.nextExit(t, k); e != (Succeeded{}) {
			t.Errorf("exit of %s = %v, want succeeded", k, e)
		}
	}
	l.Close()
	g.quiet(t)
}

// A follow-up starts at once when its activation ends, if nobody waits;
// any number of wakes of a running lane leave exactly one follow-up, and
// it serves them all.
func TestOneFollowUp(t *testing.T) {
	for _, n := range []int{1, 2, 100} {
		t.Run(fmt.Sprint(n, " wakes"), func(t *testing.T) {
			g := newGate[string]()
			l := newLanes(t, g.config(2, 0))
			wakeWant(t, l, "a", Started)
			g.nextStart(t, "a")
			wakeWant(t, l, "a", Queued)
			for range n - 1 {
				wakeWant(t, l, "a", Coalesced)
			}
			g.release("a")
			g.nextExit(t, "a")
			g.nextStart(t, "a")
			g.release("a")
			g.nextExit(t, "a")
			l.Close()
			g.quiet(t)
		})
	}
}

// A lane runs one activation at a time: its follow-up starts only after
// the running activation's step, even with slots to spare.
func TestOneActivationPerKey(t *testing.T) {
	g := newGate[string]()
	l := newLanes(t, g.config(4, 0))
	wakeWant(t, l, "a", Started)
	g.nextStart(t, "a")
	wakeWant(t, l, "a", Queued)
	notYet(t, g.starts, "a second activation of a running key")
	if s := l.snapshot(); s.running != 1 {
		t.Errorf("%d activations run, want 1", s.running)
	}
	g.release("a")
	g.nextExit(t, "a")
	g.nextStart(t, "a")
	g.release("a")
	g.nextExit(t, "a")
}
