package torture

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	lz "github.com/rivus/collab/linearizability"
)

// smallConfig is a campaign of a few seconds with a few kills and
// pauses, small enough for -race.
func smallConfig(t *testing.T, store string) Config {
	return Config{Dir: t.TempDir(), Store: store, Seed: 7, Workers: 3, Keys: 2, Duration: 3 * time.Second,
		KillEvery: 400 * time.Millisecond, PauseEvery: 500 * time.Millisecond, MinKills: 2, MinPauses: 1,
		CheckTimeout: 20 * time.Second, Command: testCommand()}
}

// TestSmallCampaign runs a short campaign on each store: it must have
// made its faults and operations, and be linearizable.
func TestSmallCampaign(t *testing.T) {
	for _, store := range []string{StoreSQLite, StoreFile} {
		t.Run(store, func(t *testing.T) {
			// The roles are drawn: the campaign runs on until it has
			// seen a wait and a leader's term, however slow the machine.
			cfg := smallConfig(t, store)
			cfg.MinWaits, cfg.MinTerms = 1, 1
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			res.Print(&out)
			t.Log("\n" + out.String())
			if res.Report.Verdict != lz.Linearizable {
				t.Fatalf("verdict %v, seed %d", res.Report.Verdict, res.Config.Seed)
			}
			s := res.Stats
			if s.Kills < 2 || s.Pauses < 1 || s.Ops < 50 || res.Counts[lz.Write]["ok"] == 0 || res.Counts[lz.Lock]["ok"] == 0 {
				t.Fatalf("vacuous campaign: %+v, counts %v", s, res.Counts)
			}
			if s.Waits == 0 || res.Counts[lz.Break]["refused"] == 0 || s.Terms == 0 {
				t.Fatalf("no waits (%d), breaks (%v) or leaders' terms (%d) in the campaign", s.Waits, res.Counts[lz.Break], s.Terms)
			}
			if len(res.EndedAlive) > 0 {
				t.Errorf("holders ended alive: %v", res.EndedAlive)
			}
			if s.StaleWrites != 0 {
				t.Errorf("%d stale writes counted in a linearizable history", s.StaleWrites)
			}
			if res.Counts[lz.Crash]["ok"] != s.Kills {
				t.Errorf("%d crashes recorded for %d kills", res.Counts[lz.Crash]["ok"], s.Kills)
			}
			if !strings.Contains(out.String(), "porcupine: linearizable") {
				t.Errorf("summary lacks the verdict:\n%s", out.String())
			}
		})
	}
}
