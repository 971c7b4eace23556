package torture

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rivus/collab/lease"
	lz "github.com/rivus/collab/linearizability"
)

// Why an operation's outcome is unknown. The workers record the reasons
// an operation can tell by its error in lz.Output.Reason; the check adds
// those only the controller knows (killed, paused), and the summary
// counts them all (Result.Unknown), so that a run whose check drowns in
// unknown outcomes says what made them.
const (
	// reasonKilled: its process was SIGKILLed during it (it is open).
	reasonKilled = "killed"
	// reasonPaused: its process was paused (SIGSTOP) while it was under
	// way, past its lease's deadline or its own as a rule, whatever error
	// it then met.
	reasonPaused = "paused"
	// reasonTimeout: its context's deadline passed (opTimeout, or a
	// wait's patience).
	reasonTimeout = "timeout"
	// reasonLeaseLost: the lease was lost or closed under its fenced
	// work, which had begun.
	reasonLeaseLost = "lease lost"
	// reasonStore: the store, the resource or the lock failed otherwise.
	reasonStore = "store error"
	// reasonUnreported: the API it calls does not say (lease/leader.Run
	// ending a campaign or a term).
	reasonUnreported = "unreported"
	// reasonCommand: a collab command ended without saying (a failed
	// exit, a garbled token).
	reasonCommand = "command failed"
	// reasonNone: no reason recorded (a history of older workers, or of
	// a caller's recorder).
	reasonNone = "no reason recorded"
)

// unknown is the output of an operation that failed with err in a way
// that does not say whether it took effect; ctx is the operation's.
func unknown(ctx context.Context, err error) lz.Output {
	return unknownFor(reasonOf(ctx, err))
}

// unknownFor is the output of an operation of unknown outcome for reason.
func unknownFor(reason string) lz.Output { return lz.Output{Status: lz.Unknown, Reason: reason} }

// reasonOf names why an operation that failed with err, its context
// ctx, has an unknown outcome. A lost lease comes first: RunFenced wraps
// the work's error, often its context's, with the loss that caused it. A
// store may report an ended context in words of its own, so an ended
// ctx is a timeout whatever the error says.
func reasonOf(ctx context.Context, err error) string {
	switch {
	case errors.Is(err, lease.ErrLost), errors.Is(err, lease.ErrFenceLost), errors.Is(err, lease.ErrReleased):
		return reasonLeaseLost
	case errors.Is(err, context.DeadlineExceeded), ctx.Err() != nil:
		return reasonTimeout
	}
	return reasonStore
}

// pausesFile is the controller's record of the pauses it made, in the
// events directory: one line a pause, pauseLine.
const (
	pausesFile = "pauses"
	// pauseLine is the paused process, and the monotonic clock before the
	// SIGSTOP and after the SIGCONT (or the SIGKILL of a paused worker).
	pauseLine = "p%d %d %d\n"
)

// pause is one SIGSTOP/SIGCONT pause of a worker, on the host's
// monotonic clock like the history's times.
type pause struct {
	process  int
	from, to time.Duration
}

// readPauses reads the pauses file of the run directory dir; a run that
// made none has none. A last line cut short is skipped (the controller
// writes each in one Write, and is not killed: this is for symmetry with
// the workers' files).
func readPauses(dir string) ([]pause, error) {
	path := filepath.Join(dir, eventsDir, pausesFile)
	var out []pause
	err := eachCompleteLine(path, func(n int, line string) error {
		var p pause
		var from, to int64
		if _, err := fmt.Sscanf(line+"\n", pauseLine, &p.process, &from, &to); err != nil {
			return fmt.Errorf("torture: %s:%d: %q is not a pause (process, from, to): %v", path, n, line, err)
		}
		p.from, p.to = time.Duration(from), time.Duration(to)
		out = append(out, p)
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return out, err
}

// unknownReasons counts the operations of unknown outcome of h
// (Event.Uncertain, as the check counts them) by reason: killed when
// open, paused when a pause of its process overlaps it, else the reason
// its worker recorded.
func unknownReasons(h lz.History, pauses []pause) map[string]int {
	byProcess := map[int][]pause{}
	for _, p := range pauses {
		byProcess[p.process] = append(byProcess[p.process], p)
	}
	out := map[string]int{}
	for _, e := range h.Events {
		if !e.Uncertain() {
			continue
		}
		out[reasonOfEvent(e, byProcess[e.Process])]++
	}
	return out
}

// reasonOfEvent is why e, of unknown outcome, is: see unknownReasons.
func reasonOfEvent(e lz.Event, pauses []pause) string {
	if e.Open {
		return reasonKilled
	}
	for _, p := range pauses {
		if time.Duration(e.Call) < p.to && time.Duration(e.Return) > p.from {
			return reasonPaused
		}
	}
	if e.Output.Reason == "" {
		return reasonNone
	}
	return e.Output.Reason
}

// unknownSummary renders counts by reason as "75 (killed 60, timeout 10,
// store error 5)": the total, then each reason, the most frequent first.
func unknownSummary(counts map[string]int) string {
	total := 0
	var reasons []string
	for r, n := range counts {
		total += n
		reasons = append(reasons, r)
	}
	if total == 0 {
		return "0"
	}
	slices.SortFunc(reasons, func(a, b string) int { return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b)) })
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%s %d", r, counts[r])
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}
