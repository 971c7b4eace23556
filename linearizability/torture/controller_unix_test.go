//go:build unix

package torture

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// leaves returns the errors errors.Join joined into err, however
// nested, or err itself.
func leaves(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var all []error
	for _, e := range j.Unwrap() {
		all = append(all, leaves(e)...)
	}
	return all
}

// TestWorkerEndsOnItsOwn: a worker that fails at once makes Run return
// promptly with a *WorkerError naming its log, and nothing else: the
// worker, reaped, is not waited for again (which took stopTimeout and
// reapTimeout and added "still running" and "not reaped" errors).
func TestWorkerEndsOnItsOwn(t *testing.T) {
	cfg := smallConfig(t, StoreSQLite)
	cfg.Command = failingCommand(1)
	// No faults and a long campaign: it ends by p1's failure alone.
	cfg.KillEvery, cfg.PauseEvery, cfg.MinKills, cfg.MinPauses = -1, -1, 0, 0
	cfg.Duration = time.Minute
	cfg.KeepDir = t.TempDir() // a failure is expected: its evidence goes with the test
	type ran struct {
		res *Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := Run(context.Background(), cfg)
		done <- ran{res, err}
	}()
	var r ran
	limit := time.NewTimer(stopTimeout) // well under stopTimeout + reapTimeout
	defer limit.Stop()
	select {
	case r = <-done:
	case <-limit.C:
		t.Errorf("Run still running %v after a worker failed at once", stopTimeout)
		r = <-done // Run is bounded: it ends, and kills its children
	}
	var ke *KeptError
	if !errors.As(r.err, &ke) || filepath.Dir(ke.Dir) != cfg.KeepDir {
		t.Fatalf("Run = %v; want a *KeptError keeping the evidence in %s", r.err, cfg.KeepDir)
	}
	errs := leaves(ke.Err)
	var we *WorkerError
	if r.res != nil || len(errs) != 1 || !errors.As(errs[0], &we) {
		t.Fatalf("Run = %v, %v (%d errors); want only a *WorkerError", r.res, r.err, len(errs))
	}
	t.Log(r.err)
	if want := procFile(cfg.Dir, logsDir, 1, ".log"); we.Process != 1 || we.Log != want || we.Err == nil {
		t.Errorf("WorkerError of p%d, log %s, exit %v; want p1, %s and its exit status", we.Process, we.Log, we.Err, want)
	}
	for _, log := range []string{we.Log, keptPath(cfg.Dir, ke.Dir, we.Log)} {
		if b, err := os.ReadFile(log); err != nil || !strings.Contains(string(b), failMessage) {
			t.Errorf("the log %s holds %q (%v); want %q", log, b, err, failMessage)
		}
	}
}
