package torture

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkerSwitchOnlyFromTheController: the worker's environment
// variable makes a worker only of a child of the controller its
// assignment names. Inherited anywhere else (a shell that exported it, a
// command a worker ran), it makes none, and the process does what it was
// started for: here, run this test binary's tests, which are none.
func TestWorkerSwitchOnlyFromTheController(t *testing.T) {
	dir := t.TempDir()
	for name, controller := range map[string]int{"another controller": os.Getpid() + 1, "no controller": 0} {
		a := assignment{Dir: dir, Store: StoreFile, Keys: 1, TTL: DefaultTTL, Heartbeat: DefaultHeartbeat, Controller: controller}
		spec, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(testCommand()[0], "-test.run=^$", "-test.v")
		cmd.Env = append(os.Environ(), EnvWorker+"="+string(spec))
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "no tests to run") {
			t.Errorf("%s: %v, output %q; want the tests run (none), not a worker", name, err, out)
		}
		if entries, _ := os.ReadDir(filepath.Join(dir)); len(entries) != 0 {
			t.Errorf("%s: the process worked in the run directory: %d entries", name, len(entries))
		}
	}
}
