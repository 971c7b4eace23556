package torture

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lz "github.com/rivus/collab/linearizability"
)

// mutation is the path of a mutated lease spec.
func mutation(name string) string {
	return filepath.Join("..", "..", "fsm", "testdata", "mutations", name+".fsm")
}

// TestNegativeControls runs the harness with broken lease policies,
// compiled from mutated specs: the check must report a violation, name
// the failing key, print its history, draw it and give the seed.
// Without this the campaigns' "linearizable" could be vacuous.
//
// Each mutation alone is masked in a real run by the safety layer the
// other removes: an early takeover is caught by the fenced write's
// re-read (its stale writes are refused), and a fenced write without the
// re-read is only reached by a stale holder after a takeover before its
// deadline, which only the other mutation makes. So the broken mode runs
// both: workers in turn take over before the TTL and write without the
// re-read, and a holder taken over writes after its successor.
func TestNegativeControls(t *testing.T) {
	broken := []string{mutation("lease-fence-without-reread"), mutation("lease-takeover-before-ttl")}
	for _, store := range []string{StoreSQLite, StoreFile} {
		t.Run(store, func(t *testing.T) {
			cfg := smallConfig(t, store)
			cfg.Policies = broken
			cfg.Duration, cfg.MinKills, cfg.MinPauses = 2*time.Second, 0, 0
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			res.Print(&out)
			text := out.String()
			t.Log("\n" + text)
			if res.Report.Verdict != lz.Violation {
				t.Fatalf("verdict %v with the broken policies, want a violation", res.Report.Verdict)
			}
			for _, want := range []string{"porcupine: violation", "replay with seed 7", "not linearizable", "history: " + res.HTML} {
				if !strings.Contains(text, want) {
					t.Errorf("summary lacks %q", want)
				}
			}
			if res.HTML == "" || res.Report.FailingKey == "" {
				t.Errorf("no visualisation (%q) or failing key (%q)", res.HTML, res.Report.FailingKey)
			}
		})
	}
}
