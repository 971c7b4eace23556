package torture

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rivus/collab/lease"
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
		var p int
		if _, err := fmt.Sscanf(filepath.Base(path), "p%d"+lossExt, &p); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			l := loss{Process: p}
			var at int64
			if _, err := fmt.Sscanf(sc.Text(), "%d %s %d", &at, &l.Key, &l.Token); err != nil {
				continue // a line cut short by a SIGKILL
			}
			l.At = time.Duration(at)
			out = append(out, l)
		}
		err = sc.Err()
		_ = f.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
