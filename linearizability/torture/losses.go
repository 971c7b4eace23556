package torture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rivus/collab/lease"
	lz "github.com/rivus/collab/linearizability"
	"github.com/rivus/collab/platform"
)

// lossExt names a worker's file of declared losses in the events
// directory: one line a loss, "monotonic-ns key token".
const lossExt = ".lost"

// loss is a lease its holder declared lost (a lease.Lost event).
type loss struct {
	Process int
	Key     string
	Token   uint64
	At      time.Duration // on the host's monotonic clock, like the history
}

// noteLoss records e, a lease.Lost event, in the worker's file of
// losses and its events file.
func (w *worker) noteLoss(e lease.Event) {
	w.note(noteLost)
	if w.losses != nil {
		_, _ = fmt.Fprintf(w.losses, "%d %s %d\n", platform.RealClock().Monotonic(), e.Key, uint64(e.Token))
	}
}

// readLosses reads the losses every worker of the run in dir declared.
func readLosses(dir string) ([]loss, error) {
	paths, err := filepath.Glob(filepath.Join(dir, eventsDir, "p*"+lossExt))
	if err != nil {
		return nil, err
	}
	var out []loss
	for _, path := range paths {
		p, err := lossProcess(path)
		if err != nil {
			return nil, err
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if l, ok := parseLoss(p, sc.Text()); ok {
				out = append(out, l)
			}
		}
		err = sc.Err()
		_ = f.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lossProcess returns the process whose file of losses path is.
func lossProcess(path string) (int, error) {
	var p int
	if _, err := fmt.Sscanf(filepath.Base(path), "p%d"+lossExt, &p); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// parseLoss reads one line of process p's file of losses; false for a
// line cut short by a SIGKILL.
func parseLoss(p int, line string) (loss, bool) {
	l := loss{Process: p}
	var at int64
	if _, err := fmt.Sscanf(line, "%d %s %d", &at, &l.Key, &l.Token); err != nil {
		return loss{}, false
	}
	l.At = time.Duration(at)
	return l, true
}

// heldLease names one lease: the process that acquired it, its key and its
// token.
type heldLease struct {
	process int
	key     string
	token   uint64
}

// cutOff counts the losses of leases cut off by a server stop: their
// holder had acquired them before the stop began (acquired returns when
// the acquisition returned OK), and declared them lost during the stop
// or within 3 TTLs of its end, as a holder that cannot renew must (the
// TTL rule). That later acquisitions of the key get larger tokens, and
// no stale write is accepted, is the linearizability check's part.
func cutOff(losses []loss, outages []Outage, ttl time.Duration, acquired func(heldLease) (time.Duration, bool)) int {
	n := 0
	for _, l := range losses {
		at, ok := acquired(heldLease{l.Process, l.Key, l.Token})
		if !ok {
			continue
		}
		for _, o := range outages {
			if o.Kind == ServerStop && at < o.From && l.At >= o.From && l.At <= o.To+3*ttl {
				n++
				break
			}
		}
	}
	return n
}

// cutTally gathers, as a run's files grow, what cutOff needs: the
// acquisitions that returned OK and the losses declared.
type cutTally struct {
	calls    map[opKey]histLine // acquisitions called, not returned yet
	acquired map[heldLease]time.Duration
	losses   []loss
}

func newCutTally() *cutTally {
	return &cutTally{calls: map[opKey]histLine{}, acquired: map[heldLease]time.Duration{}}
}

// addHistory reads whole history lines. A line it cannot read is
// skipped (the check reads the files again, strictly).
func (c *cutTally) addHistory(lines []byte) {
	for l := range bytes.SplitSeq(lines, []byte("\n")) {
		var h histLine
		if len(l) == 0 || json.Unmarshal(l, &h) != nil {
			continue
		}
		id := opKey{h.P, h.ID}
		switch h.Ev {
		case "call":
			if h.Kind == lz.Acquire {
				c.calls[id] = h
			}
		case "ret":
			call, ok := c.calls[id]
			if !ok {
				continue
			}
			delete(c.calls, id)
			if h.Out != nil && h.Out.Status == lz.OK {
				c.acquired[heldLease{call.P, call.Key, h.Out.Gen}] = time.Duration(h.At)
			}
		}
	}
}

// addLosses reads whole lines of process p's file of losses.
func (c *cutTally) addLosses(p int, lines []byte) {
	for l := range bytes.SplitSeq(lines, []byte("\n")) {
		if l, ok := parseLoss(p, string(l)); ok {
			c.losses = append(c.losses, l)
		}
	}
}

// count is cutOff of what was read, with outages.
func (c *cutTally) count(outages []Outage, ttl time.Duration) int {
	return cutOff(c.losses, outages, ttl, func(l heldLease) (time.Duration, bool) {
		at, ok := c.acquired[l]
		return at, ok
	})
}
