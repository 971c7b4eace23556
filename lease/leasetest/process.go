package leasetest

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rivus/collab/internal/childproc"
	"github.com/rivus/collab/lease/store"
)

// holderEnv names, in the environment of a child of FenceOtherProcess,
// the directory of the repository whose fence the child holds.
const holderEnv = "COLLAB_LEASETEST_FENCE_DIR"

// otherProcess is the subtest that starts a child, and the only one that
// RunShared runs in the child.
const otherProcess = "FenceOtherProcess"

// heldLine is what the child says once it holds the fence.
const heldLine = "leasetest: fence held"

// processKey is the key whose fence the child holds.
const processKey = "other/process"

// testFenceOtherProcess: a fence held by another process keeps this one's
// Fence waiting, through callers here that give up, until that process
// unlocks it, and, held again, until that process is killed (SIGKILL on
// Unix), which must free it: a system lock goes with its process.
func testFenceOtherProcess(t *testing.T, dir string, open func(*testing.T, string) store.Repository) {
	r := open(t, dir) // the first handle on dir is this process's
	for _, kill := range []bool{false, true} {
		c := startHolder(t, dir)
		wantFenceHeld(t, r, processKey)
		wantFenceHeld(t, r, processKey) // the first caller's giving up freed nothing
		if kill {
			if err := c.Cmd.Process.Kill(); err != nil {
				t.Fatalf("kill process %d, which holds the fence: %v", c.Pid(), err)
			}
			_ = c.Wait() // once it is reaped, the system has dropped its locks
			fenceNow(t, r, processKey)()
			continue
		}
		_ = c.Stdin.Close() // the child unlocks at the end of its input
		fenceNow(t, r, processKey)()
		out, _ := io.ReadAll(c.Stdout())
		if err := c.Wait(); err != nil {
			t.Fatalf("process %d, which held the fence, failed after it let go: %v\n%s", c.Pid(), err, out)
		}
	}
}

// startHolder starts this test binary again, running only the current
// subtest, with dir in its environment: there RunShared holds
// processKey's fence in the repository in dir, says heldLine, and keeps
// the fence until its stdin ends. It returns once the child holds it.
func startHolder(t *testing.T, dir string) *childproc.Child {
	t.Helper()
	c := childproc.StartRun(t, runPattern(t.Name()), holderEnv+"="+dir)
	var said strings.Builder
	for {
		line, err := c.Stdout().ReadString('\n')
		if line == heldLine+"\n" {
			return c
		}
		said.WriteString(line)
		if err != nil {
			t.Fatalf("process %d, meant to hold the fence, ended before it did (%v); it ran %s alone, which must reach the same RunShared, and said:\n%s",
				c.Pid(), c.Wait(), t.Name(), said.String())
		}
	}
}

// holdFence is the child's part: it holds processKey's fence in the
// repository in dir until its stdin ends.
func holdFence(t *testing.T, dir string, open func(*testing.T, string) store.Repository) {
	r := open(t, dir)
	unlock, err := r.Fence(t.Context(), processKey)
	if err != nil {
		t.Fatalf("Fence(%q) in the process meant to hold it: %v", processKey, err)
	}
	defer unlock()
	if _, err := fmt.Println(heldLine); err != nil {
		t.Fatalf("tell the parent the fence is held: %v", err)
	}
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		t.Fatalf("read the parent's input: %v", err)
	}
}

// runPattern returns the -test.run pattern that selects the test named
// name (t.Name()) and nothing else.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}
