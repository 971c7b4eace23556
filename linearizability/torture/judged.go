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
// Each worker writes its identity (pid, pid namespace, start time) in the
// events directory, and the controller the moment it began to stop them.
// A holder that is a collab process a worker started (`collab lease run`,
// which may outlive its worker, or exit without letting go after a
// failure) is not judged here: its worker writes its pid, not its life.
// A holder is known by its whole identity: a worker in a pid namespace of
// its own is process 1 there, and a namespace's number is reused once
// its last process is gone.

// File names of the events directory for the judgements.
const (
	selfExt     = ".self"     // p<N>.self: a worker's identity (selfLine)
	commandsExt = ".commands" // p<N>.commands: the collab processes a worker started, "pid ns" a line
	takeoverExt = ".takeover" // p<N>.takeover: a worker's takeovers
	stoppingLog = "stopping"  // the controller's monotonic clock when it began to stop the workers
	// selfLine is a worker's identity: pid, pid namespace, start time.
	selfLine = "%d %d %d\n"
	// brokenHolder is Output.Value of a Break OK: the holder's identity
	// and the breaker's pid namespace.
	brokenHolder = "pid %d ns %d start %d by ns %d"
	// takeoverLine is a line of a takeover file: the monotonic clock
	// after the takeover, the key, the token taken, the previous holder's
	// identity, the taker's pid namespace, and whether the holder was
	// proved dead (else it was silent for the TTL).
	takeoverLine = "%d %s %d %d %d %d %d %t\n"
)

// workerID is a process's identity as a record names it.
type workerID struct {
	pid   int // in its pid namespace
	ns    uint64
	start uint64
}

// judgement is a verdict that let a worker end a holder's lease.
type judgement struct {
	process int
	what    string // "break" or "takeover"
	key     string
	gen     uint64        // the generation ended
	at      time.Duration // after the verdict
	holder  workerID
	ownNS   uint64 // the judge's pid namespace
	dead    bool   // a takeover on proof of death, not of silence
}

func (j judgement) String() string {
	return fmt.Sprintf("p%d's %s of %q (gen %d) at %v", j.process, j.what, j.key, j.gen, j.at)
}

// noteTakeover appends e, a TakenOver event, to the worker's takeover
// file.
func (w *worker) noteTakeover(e lease.Event) {
	if w.takeovers == nil || e.Previous == nil {
		return
	}
	_, _ = fmt.Fprintf(w.takeovers, takeoverLine, platform.RealClock().Monotonic(), e.Key, uint64(e.Token),
		e.Previous.PID, e.Previous.PIDNamespace, e.Previous.StartTime, w.self.PIDNamespace, e.PreviousDead)
}

// wrongJudgements returns, described, the judgements that ended a holder
// that was not dead: see the comment at the top of this file. killed maps
// a process to the moment its kill was sent; stopping is when the
// controller began to stop the workers.
func wrongJudgements(js []judgement, workers map[workerID]int, commands map[workerID]bool, killed map[int]time.Duration, stopping time.Duration) []string {
	var out []string
	for _, j := range js {
		switch {
		case commands[workerID{pid: j.holder.pid, ns: j.holder.ns}]:
		case j.what == "takeover" && !j.dead: // after the TTL: the history's check
		case j.holder.ns != j.ownNS && j.what == "takeover":
			out = append(out, fmt.Sprintf("%s proved dead pid %d of another process table (pid namespace %d; its own %d): a holder there can only be judged by the TTL",
				j, j.holder.pid, j.holder.ns, j.ownNS))
		case j.holder.ns != j.ownNS, j.at >= stopping:
		default:
			p, ok := workers[j.holder]
			if !ok {
				out = append(out, fmt.Sprintf("%s ended %+v, no worker of this campaign", j, j.holder))
				continue
			}
			if t, ok := killed[p]; !ok || t > j.at {
				out = append(out, fmt.Sprintf("%s ended p%d (pid %d), which was alive: no kill had been sent to it", j, p, j.holder.pid))
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
			if _, err := fmt.Sscanf(e.Output.Value, brokenHolder, &j.holder.pid, &j.holder.ns, &j.holder.start, &j.ownNS); err != nil {
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
	var out []judgement
	err := eachCompleteLine(path, func(n int, line string) error {
		j := judgement{process: p, what: "takeover"}
		var at int64
		if _, err := fmt.Sscanf(line+"\n", takeoverLine, &at, &j.key, &j.gen, &j.holder.pid, &j.holder.ns, &j.holder.start, &j.ownNS, &j.dead); err != nil {
			return fmt.Errorf("torture: %s:%d: %q is not a takeover: %v", path, n, line, err)
		}
		j.at = time.Duration(at)
		out = append(out, j)
		return nil
	})
	return out, err
}

// eachCompleteLine calls f with each whole line of the file at path and
// its number, from 1: a last line cut short by a SIGKILL is skipped.
func eachCompleteLine(path string, f func(n int, line string) error) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(data[:bytes.LastIndexByte(data, '\n')+1]))
	for n := 1; sc.Scan(); n++ {
		if err := f(n, sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}

// readWorkers reads the identity files the workers wrote: identity →
// process.
func readWorkers(dir string) (map[workerID]int, error) {
	paths, err := filepath.Glob(filepath.Join(dir, eventsDir, "p*"+selfExt))
	if err != nil {
		return nil, err
	}
	workers := make(map[workerID]int, len(paths))
	for _, path := range paths {
		var p int
		var id workerID
		if _, err := fmt.Sscanf(filepath.Base(path), "p%d"+selfExt, &p); err != nil {
			return nil, fmt.Errorf("torture: %s: not a worker's identity file", path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if !bytes.HasSuffix(b, []byte("\n")) {
			// Cut short by a SIGKILL: the worker had not opened its
			// manager yet, so it held nothing.
			continue
		}
		if _, err := fmt.Sscanf(string(b), selfLine, &id.pid, &id.ns, &id.start); err != nil || id.pid <= 0 {
			return nil, fmt.Errorf("torture: %s: %q is not an identity (pid, pid namespace, start time)", path, b)
		}
		workers[id] = p
	}
	return workers, nil
}

// noteCommandProcess appends a collab process the worker started to its
// commands file, as it starts: with the worker's pid namespace, which the
// child shares.
func (w *worker) noteCommandProcess(pid int) error {
	if w.commands == nil {
		var err error
		if w.commands, err = appendFile(procFile(w.a.Dir, eventsDir, w.a.Process, commandsExt)); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w.commands, "%d %d\n", pid, w.self.PIDNamespace)
	return err
}

// readCommands reads the commands files: the collab processes workers
// started, by pid and pid namespace (start time 0). A last line cut short
// by a SIGKILL is skipped.
func readCommands(dir string) (map[workerID]bool, error) {
	paths, err := filepath.Glob(filepath.Join(dir, eventsDir, "p*"+commandsExt))
	if err != nil {
		return nil, err
	}
	out := map[workerID]bool{}
	for _, path := range paths {
		err := eachCompleteLine(path, func(n int, line string) error {
			var id workerID
			if _, err := fmt.Sscanf(line+"\n", "%d %d\n", &id.pid, &id.ns); err != nil {
				return fmt.Errorf("torture: %s:%d: %q is not a process (pid, pid namespace)", path, n, line)
			}
			out[id] = true
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
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

// judged sums up the judgements of a run.
type judged struct {
	breaks, deadTakeovers int
	// crossTable counts the breaks and takeovers (on proof of death or of
	// silence) of a holder in another process table than the judge's.
	crossTable int
	endedAlive []string // the wrong ones (wrongJudgements)
}

// checkJudgements is the check of this file over a finished run.
func checkJudgements(dir string, h lz.History) (judged, error) {
	js, killed, err := judgements(dir, h)
	if err != nil {
		return judged{}, err
	}
	workers, err := readWorkers(dir)
	if err != nil {
		return judged{}, err
	}
	stopping, err := readStopping(dir)
	if err != nil {
		return judged{}, err
	}
	commands, err := readCommands(dir)
	if err != nil {
		return judged{}, err
	}
	var s judged
	for _, j := range js {
		switch {
		case j.what == "break":
			s.breaks++
		case j.dead:
			s.deadTakeovers++
		}
		if j.holder.ns != j.ownNS {
			s.crossTable++
		}
	}
	s.endedAlive = wrongJudgements(js, workers, commands, killed, stopping)
	return s, nil
}

// writeSelf writes a worker's identity file, and writeStopping the
// moment the controller begins to stop the workers.
func writeSelf(dir string, p int, id platform.Identity) error {
	return os.WriteFile(procFile(dir, eventsDir, p, selfExt), fmt.Appendf(nil, selfLine, id.PID, id.PIDNamespace, id.StartTime), 0o600)
}

func writeStopping(dir string) error {
	return os.WriteFile(filepath.Join(dir, eventsDir, stoppingLog), fmt.Appendf(nil, "%d\n", platform.RealClock().Monotonic()), 0o600)
}
