package torture

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lz "github.com/rivus/collab/linearizability"
)

// mutation is the path of a mutated lease spec.
func mutation(name string) string {
	return filepath.Join("..", "..", "worldmodel", "testdata", "mutations", name+".fsm")
}

// TestNegativeControls runs the harness with broken lease policies,
// compiled from mutated specs: the check must report a violation, name
// the failing key and the operations porcupine could not place, print
// its history, draw it, give the seed, and keep its evidence where it
// outlives the run directory.
// Without this the campaigns' "linearizable" could be vacuous.
//
// Each mutation alone is masked in a real run by the safety layer the
// other removes: an early takeover is caught by the fenced write's
// re-read (its stale writes are refused), and a fenced write without the
// re-read is only reached by a stale holder after a takeover before its
// deadline, which only the other mutation makes. So the broken mode runs
// both: workers of odd process numbers take over a live holder at once,
// workers of even ones write without the re-read, and an even holder
// taken over by an odd worker writes after its successor's acquisition
// returned, until its next renewal meets the successor's record. That
// stale write is the violation.
//
// It needs no SIGKILL or SIGSTOP, and they do not help: a pause lasts at
// least a TTL, so the paused holder's deadline is due when it continues
// and declares the lease lost as it wakes, before its next write as a
// rule; a kill ends a holder, and the open operations of killed workers
// make the check of a violating history slow, up to its timeout. So the
// control makes none. Rather than hope the workers meet so within a
// time, it runs until the harness saw a stale write (MinStaleWrites),
// which no linearization allows: the verdict does not depend on the
// machine's speed, only the run's length does. A TTL of a second,
// renewed every half, leaves a holder taken over the time to write
// before its renewal tells it, however loaded the machine.
func TestNegativeControls(t *testing.T) {
	broken := []string{mutation("lease-fence-without-reread"), mutation("lease-takeover-before-ttl")}
	for _, store := range []string{StoreSQLite, StoreFile} {
		t.Run(store, func(t *testing.T) {
			cfg := smallConfig(t, store)
			cfg.Policies = broken
			cfg.TTL, cfg.Heartbeat = time.Second, 500*time.Millisecond
			cfg.KillEvery, cfg.PauseEvery, cfg.MinKills, cfg.MinPauses = -1, -1, 0, 0
			cfg.Duration, cfg.MinStaleWrites = time.Second, 1
			cfg.KeepDir = t.TempDir() // a failure is expected: its evidence goes with the test
			// A bound for a machine loaded far beyond what the run needs
			// (seconds), not a time it is expected to take.
			cfg.Deadline = 2*time.Minute + 2*cfg.CheckTimeout
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
			for _, want := range []string{"porcupine: violation", "replay with seed 7", "not linearizable", "history: " + res.HTML,
				"violating objects, the shortest failing history first: ", "it could place none of these next:\n  p",
				"evidence kept in " + res.Kept} {
				if !strings.Contains(text, want) {
					t.Errorf("summary lacks %q", want)
				}
			}
			if res.HTML == "" || res.Report.FailingKey == "" {
				t.Errorf("no visualisation (%q) or failing key (%q)", res.HTML, res.Report.FailingKey)
			}
			if _, err := os.Stat(res.HTML); res.Kept == "" || filepath.Dir(res.Kept) != cfg.KeepDir || err != nil {
				t.Errorf("evidence kept in %q, visualisation %v; want a directory of %s holding it", res.Kept, err, cfg.KeepDir)
			}
		})
	}
}
