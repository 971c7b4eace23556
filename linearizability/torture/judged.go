package torture

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/rivus/collab/lease"
	lz "github.com/rivus/collab/linearizability"
	"github.com/rivus/collab/platform"
)

// A worker may end another's lease on its own judgement in two ways: a
// break without force, which must refuse a holder that may still run on
// this process table, and a takeover on proof of death. Neither shows in
// the history as a violation (fencing refuses the ended holder's later
// writes), so the check holds each against what the controller did:
//
//   - a holder of the judge's own process table must have been sent its
//     SIGKILL before the verdict was reported (or the workers were being
//     told to stop: a worker that exits with a lease it could not release
//     is dead without a kill);
//   - a holder of another process table (another pid namespace) cannot be
//     proved dead: a takeover may end it after the TTL, never on proof.
//
// The controller writes each worker's pid, as this process table sees it,
// in the events directory, and the moment it began to stop them.

// File names of the events directory for the judgements.
const (
	pidExt      = ".pid"      // p<N>.pid: a worker's pid, written by the controller
	takeoverExt = ".takeover" // p<N>.takeover: a worker's takeovers on proof of death
	stoppingLog = "stopping"  // the controller's monotonic clock when it began to stop the workers
	// brokenHolder is Output.Value of a Break OK: the holder's pid and
	// pid namespace, and the breaker's pid namespace.
	brokenHolder = "pid %d ns %d by ns %d"
	// takeoverLine is a line of a takeover file: the monotonic clock
	// after the takeover, the key, the token taken, the previous holder's
	// pid and pid namespace, and the taker's pid namespace.
	takeoverLine = "%d %s %d %d %d %d\n"
)

// judgement is a verdict that let a worker end a holder's lease.
type judgement struct {
	process  int
	what     string // "break" or "takeover"
	key      string
	gen      uint64        // the generation ended
	at       time.Duration // after the verdict
	pid      int           // the holder's, in its own pid namespace
	holderNS uint64
	ownNS    uint64
}

func (j judgement) String() string {
	return fmt.Sprintf("p%d's %s of %q (gen %d) at %v", j.process, j.what, j.key, j.gen, j.at)
}

// noteDeadTakeover appends e, a TakenOver event on proof of death, to the
// worker's takeover file.
func (w *worker) noteDeadTakeover(e lease.Event) {
	if w.takeovers == nil || e.Previous == nil {
		return
	}
	_, _ = fmt.Fprintf(w.takeovers, takeoverLine, platform.RealClock().Monotonic(), e.Key, uint64(e.Token),
		e.Previous.PID, e.Previous.PIDNamespace, w.self.PIDNamespace)
}

// wrongJudgements returns, described, the judgements that ended a holder
// that was not dead: see the comment at the top of this file. killed maps
// a process to the moment its kill was sent; stopping is when the
// controller began to stop the workers.
func wrongJudgements(js []judgement, pids map[int]int, killed map[int]time.Duration, stopping time.Duration) []string {
	var out []string
	for _, j := range js {
		switch {
		case j.holderNS != j.ownNS && j.what == "takeover":
			out = append(out, fmt.Sprintf("%s proved dead pid %d of another process table (pid namespace %d; its own %d): a holder there can only be judged by the TTL",
				j, j.pid, j.holderNS, j.ownNS))
		case j.holderNS != j.ownNS, j.at >= stopping:
		default:
			p, ok := pids[j.pid]
			if !ok {
				out = append(out, fmt.Sprintf("%s ended pid %d, no worker of this campaign", j, j.pid))
				continue
			}
			if t, ok := killed[p]; !ok || t > j.at {
				out = append(out, fmt.Sprintf("%s ended p%d (pid %d), which was alive: no kill had been sent to it", j, p, j.pid))
			}
		}
	}
	return out
}

// judgements gathers the breaks of the history and the takeovers of the
// run directory's files, and the kills of the history.
func judgements(dir string, h lz.History) (js []judgement, killed map[int]time.Duration, err error) {
	killed = map[int]time.Duration{}
	for _, e := range h.Events {
		switch {
		case e.Kind == lz.Crash && e.Key == "":
			if t, ok := killed[e.Process]; !ok || time.Duration(e.Call) < t {
				killed[e.Process] = time.Duration(e.Call)
			}
		case e.Kind == lz.Break && !e.Open && e.Output.Status == lz.OK:
			j := judgement{process: e.Process, what: "break", key: e.Key, gen: e.Output.Gen, at: time.Duration(e.Return)}
			if _, err := fmt.Sscanf(e.Output.Value, brokenHolder, &j.pid, &j.holderNS, &j.ownNS); err != nil {
				return nil, nil, fmt.Errorf("torture: %s names no holder: %q", j, e.Output.Value)
			}
			js = append(js, j)
		}
	}
	paths, err := filepath.Glob(filepath.Join(dir, eventsDir, "p*"+takeoverExt))
	if err != nil {
		return nil, nil, err
	}
	for _, path := range paths {
		t, err := readTakeovers(path)
		if err != nil {
			return nil, nil, err
		}
		js = append(js, t...)
	}
	return js, killed, nil
}

// readTakeovers reads one worker's takeover file; a last line cut short
// by a SIGKILL is skipped, any other bad line is an error naming it.
func readTakeovers(path string) ([]judgement, error) {
	var p int
	if _, err := fmt.Sscanf(filepath.Base(path), "p%d"+takeoverExt, &p); err != nil {
		return nil, fmt.Errorf("torture: %s: not a worker's takeover file", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []judgement
	sc := bufio.NewScanner(bytes.NewReader(data[:bytes.LastIndexByte(data, '\n')+1]))
	for n := 1; sc.Scan(); n++ {
		j := judgement{process: p, what: "takeover"}
		var at int64
		if _, err := fmt.Sscanf(sc.Text()+"\n", takeoverLine, &at, &j.key, &j.gen, &j.pid, &j.holderNS, &j.ownNS); err != nil {
			return nil, fmt.Errorf("torture: %s:%d: %q is not a takeover: %v", path, n, sc.Text(), err)
		}
		j.at = time.Duration(at)
		out = append(out, j)
	}
	return out, sc.Err()
}

// readPIDs reads the pid files the controller wrote: pid → process.
func readPIDs(dir string) (map[int]int, error) {
	paths, err := filepath.Glob(filepath.Join(dir, eventsDir, "p*"+pidExt))
	if err != nil {
		return nil, err
	}
	pids := make(map[int]int, len(paths))
	for _, path := range paths {
		var p, pid int
		if _, err := fmt.Sscanf(filepath.Base(path), "p%d"+pidExt, &p); err != nil {
			return nil, fmt.Errorf("torture: %s: not a worker's pid file", path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if _, err := fmt.Sscanf(string(b), "%d\n", &pid); err != nil || pid <= 0 {
			return nil, fmt.Errorf("torture: %s: %q is not a pid", path, b)
		}
		pids[pid] = p
	}
	return pids, nil
}

// readStopping reads when the controller began to stop the workers; a
// run that never did (none is checked) reads as never.
func readStopping(dir string) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(dir, eventsDir, stoppingLog))
	if os.IsNotExist(err) {
		return math.MaxInt64, nil
	}
	if err != nil {
		return 0, err
	}
	var at int64
	if _, err := fmt.Sscanf(string(b), "%d\n", &at); err != nil {
		return 0, fmt.Errorf("torture: %s: %q is not a moment", filepath.Join(dir, eventsDir, stoppingLog), b)
	}
	return time.Duration(at), nil
}

// checkJudgements is the check of this file over a finished run: how
// many judgements it holds, and the wrong ones.
func checkJudgements(dir string, h lz.History) (int, []string, error) {
	js, killed, err := judgements(dir, h)
	if err != nil {
		return 0, nil, err
	}
	pids, err := readPIDs(dir)
	if err != nil {
		return 0, nil, err
	}
	stopping, err := readStopping(dir)
	if err != nil {
		return 0, nil, err
	}
	return len(js), wrongJudgements(js, pids, killed, stopping), nil
}

// writePID writes a worker's pid file, and writeStopping the moment the
// controller begins to stop the workers.
func writePID(dir string, p, pid int) error {
	return os.WriteFile(procFile(dir, eventsDir, p, pidExt), fmt.Appendf(nil, "%d\n", pid), 0o600)
}

func writeStopping(dir string) error {
	return os.WriteFile(filepath.Join(dir, eventsDir, stoppingLog), fmt.Appendf(nil, "%d\n", platform.RealClock().Monotonic()), 0o600)
}
