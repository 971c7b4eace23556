package lanes

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/gen"
	"github.com/rivus/collab/policy"
)

func nop(context.Context, string) error { return nil }

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config[string]
		field string // "" when valid
	}{
		{"zero but Activate", Config[string]{Activate: nop}, ""},
		{"all set", Config[string]{MaxConcurrent: 4, MaxQueued: 32, TurnTimeout: time.Minute, Activate: nop, Policy: fsm.LanePolicy}, ""},
		{"NoQueue", Config[string]{MaxQueued: NoQueue, Activate: nop}, ""},
		{"negative MaxConcurrent", Config[string]{MaxConcurrent: -1, Activate: nop}, "MaxConcurrent"},
		{"MaxQueued below NoQueue", Config[string]{MaxQueued: -2, Activate: nop}, "MaxQueued"},
		{"negative TurnTimeout", Config[string]{TurnTimeout: -time.Second, Activate: nop}, "TurnTimeout"},
		{"no Activate", Config[string]{}, "Activate"},
		{"policy of another family", Config[string]{Activate: nop, Policy: fsm.TurnPolicy}, "Policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := New(context.Background(), tt.cfg)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				l.Close()
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field {
				t.Fatalf("New = %v, %v; want a *ConfigError for %s", l, err, tt.field)
			}
			if l != nil {
				t.Errorf("New returned lanes with error %v", err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not name %s", err, tt.field)
			}
		})
	}
}

// MaxConcurrent 0 means 1: a second key waits.
func TestMaxConcurrentDefault(t *testing.T) {
	g := newGate[string]()
	l := newLanes(t, g.config(0, 0))
	wakeWant(t, l, "a", Started)
	wakeWant(t, l, "b", Queued)
	g.nextStart(t, "a")
	g.release("a")
	g.nextExit(t, "a")
	g.nextStart(t, "b")
	g.release("b")
	g.nextExit(t, "b")
}

// room is a struct key: keys are any comparable type.
type room struct {
	tenant string
	id     int
}

func TestStructKey(t *testing.T) {
	g := newGate[room]()
	l := newLanes(t, g.config(1, 0))
	r1, r2 := room{"acme", 1}, room{"acme", 2}
	wakeWant(t, l, r1, Started)
	wakeWant(t, l, r2, Queued)
	wakeWant(t, l, room{"acme", 2}, Coalesced) // an equal value is the same key
	wakeWant(t, l, room{"other", 1}, Queued)
	g.nextStart(t, r1)
	g.release(r1)
	if e := g.nextExit(t, r1); e != (Succeeded{}) {
		t.Errorf("exit of %v = %v, want succeeded", r1, e)
	}
	g.nextStart(t, r2)
	g.release(r2)
	g.nextExit(t, r2)
	g.nextStart(t, room{"other", 1})
	g.release(room{"other", 1})
	g.nextExit(t, room{"other", 1})
	l.Close()
	g.quiet(t)
}

// editedPolicy compiles a copy of spec/lane.fsm in which the rows that
// match pattern are replaced by repl.
func editedPolicy(t *testing.T, pattern, repl string) policy.Policy {
	t.Helper()
	src, err := os.ReadFile("../spec/lane.fsm")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(pattern)
	if !re.Match(src) {
		t.Fatalf("spec/lane.fsm has no row matching %q", pattern)
	}
	edited := re.ReplaceAll(src, []byte(repl))
	spec, err := gen.Parse("lane_edited.fsm", edited)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := gen.Validate(spec)
	if err != nil {
		t.Fatal(err)
	}
	return policy.Compile(tbl)
}

// The runtime follows a custom policy of the lane family: its answers and
// what it starts are the policy's, not the shipped one's.
func TestCustomPolicy(t *testing.T) {
	// An idle lane that must wait answers Coalesced instead of Queued.
	coalescedWait := editedPolicy(t,
		`(?m)^Idle\s+--Wake \[!slotFree, queueRoom\] / enqueue, queued\s+--> Waiting$`,
		`Idle --Wake [!slotFree, queueRoom] / enqueue, coalesced --> Waiting`)
	// A running lane owes no follow-up: a wake of it is served by nothing.
	noFollowUp := editedPolicy(t,
		`(?m)^Running\s+--Wake \[queueRoom\].*\nRunning\s+--Wake \[!queueRoom\].*$`,
		`Running --Wake / coalesced`)
	tests := []struct {
		name   string
		pol    policy.Policy
		wakeB  WakeResult // b waking while a runs
		wakeA  WakeResult // a waking while it runs
		starts []string   // activations after a's first, in order
	}{
		{"shipped", nil, Queued, Queued, []string{"b", "a"}},
		{"coalesced wait", coalescedWait, Coalesced, Queued, []string{"b", "a"}},
		{"no follow-up", noFollowUp, Queued, Coalesced, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate[string]()
			cfg := g.config(1, 0)
			cfg.Policy = tt.pol
			l := newLanes(t, cfg)
			wakeWant(t, l, "a", Started)
			wakeWant(t, l, "b", tt.wakeB)
			wakeWant(t, l, "a", tt.wakeA)
			g.nextStart(t, "a")
			g.release("a")
			g.nextExit(t, "a")
			for _, k := range tt.starts {
				g.nextStart(t, k)
				g.release(k)
				g.nextExit(t, k)
			}
			// With one slot, the last activation's step is done once
			// Close has returned; nothing more may have started.
			l.Close()
			g.quiet(t)
		})
	}
}
