package torture

import (
	"context"
	"testing"
	"time"

	"github.com/rivus/collab/lanes"
)

// TestLanesCampaign: a short lanes campaign reaches every answer of
// Wake and every exit, closes several sets of lanes under the wakers,
// and breaks no promise.
func TestLanesCampaign(t *testing.T) {
	res, err := RunLanes(t.Context(), LanesConfig{Seed: 3, Duration: time.Second, Lifetime: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Stats
	t.Logf("%+v", s)
	if res.Failed() {
		t.Fatalf("violations:\n%v", res.Violations)
	}
	if s.Instances < 2 || s.Cancels == 0 || s.Full == 0 || s.Closed == 0 || s.Activations == 0 {
		t.Errorf("vacuous campaign: %+v", s)
	}
	for _, r := range []lanes.WakeResult{lanes.Started, lanes.Queued, lanes.Coalesced} {
		if s.Wakes[r] == 0 {
			t.Errorf("no wake answered %v", r)
		}
	}
	for _, x := range []string{"succeeded", "failed", "dropped", "cancelled", "timed out", "closed"} {
		if s.Exits[x] == 0 {
			t.Errorf("no exit %q heard: %v", x, s.Exits)
		}
	}
}

// TestLanesCampaignEndsWithItsContext: a ctx that ends ends the campaign
// early, its events still checked.
func TestLanesCampaignEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := RunLanes(ctx, LanesConfig{Duration: time.Hour})
	if err != nil || res.Failed() || res.Stats.Instances != 1 {
		t.Fatalf("RunLanes with an ended ctx = %+v, %v", res, err)
	}
}
