package torture

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"

	lz "github.com/rivus/collab/linearizability"
)

// histLine is the part of a history line (as linearizability.Recorder
// writes it) that the stale-write tally reads.
type histLine struct {
	Ev   string     `json:"ev"`
	P    int        `json:"p"`
	ID   uint64     `json:"id"`
	At   int64      `json:"at"`
	Key  string     `json:"key"`
	Kind lz.Kind    `json:"kind"`
	In   *lz.Input  `json:"in"`
	Out  *lz.Output `json:"out"`
}

// staleTally finds the stale writes of a run as its history lines are
// read: fenced writes that returned OK with a token below the generation
// of an acquisition of their key that had returned OK before the write
// was called. The model lets no such write happen (a generation never
// goes down, and a write needs the record to hold its token), whatever
// the rest of the history: each one is a violation that the check must
// report. A safe campaign has none.
//
// The files are read one after another, so an acquisition may be read
// after a write it makes stale: both sides are kept, ordered by time,
// and each new one is checked against the other.
type staleTally struct {
	calls map[opKey]histLine // acquisitions and writes called, not returned yet
	keys  map[string]*keyStale
	n     int
}

// opKey names an operation in the history files: its process and its
// sequence number there.
type opKey struct {
	p  int
	id uint64
}

// keyStale is one key's returned acquisitions and writes.
type keyStale struct {
	// acquired are the acquisitions that returned OK, by return time;
	// maxGen[i] is the highest generation of acquired[:i+1].
	acquired []stamp
	maxGen   []uint64
	// written are the writes that returned OK and are not (yet) known
	// to be stale, by call time.
	written []stamp
}

// stamp is a moment on the host's monotonic clock and a generation: an
// acquisition's return and its generation, or a write's call and its
// token.
type stamp struct {
	at  int64
	gen uint64
}

func newStaleTally() *staleTally {
	return &staleTally{calls: map[opKey]histLine{}, keys: map[string]*keyStale{}}
}

// add reads whole history lines. A line it cannot read is skipped: the
// check reads the files again, strictly.
func (s *staleTally) add(lines []byte) {
	for l := range bytes.SplitSeq(lines, []byte("\n")) {
		var h histLine
		if len(l) == 0 || json.Unmarshal(l, &h) != nil {
			continue
		}
		id := opKey{h.P, h.ID}
		switch h.Ev {
		case "call":
			if (h.Kind == lz.Acquire || h.Kind == lz.Write) && h.In != nil {
				s.calls[id] = h
			}
		case "ret":
			call, ok := s.calls[id]
			if !ok {
				continue
			}
			delete(s.calls, id)
			if h.Out == nil || h.Out.Status != lz.OK {
				continue
			}
			k := s.keys[call.Key]
			if k == nil {
				k = &keyStale{}
				s.keys[call.Key] = k
			}
			if call.Kind == lz.Acquire {
				s.n += k.acquire(stamp{at: h.At, gen: h.Out.Gen})
			} else {
				s.n += k.write(stamp{at: call.At, gen: call.In.Token})
			}
		}
	}
}

// acquire adds an acquisition that returned OK, and returns how many of
// the writes known it makes stale (those called after it returned, with
// a lower token), which it forgets.
func (k *keyStale) acquire(a stamp) int {
	i, _ := slices.BinarySearchFunc(k.acquired, a.at, func(x stamp, at int64) int { return cmp.Compare(x.at, at+1) })
	k.acquired = slices.Insert(k.acquired, i, a)
	k.maxGen = slices.Insert(k.maxGen, i, 0)
	for j := i; j < len(k.acquired); j++ {
		k.maxGen[j] = k.acquired[j].gen
		if j > 0 {
			k.maxGen[j] = max(k.maxGen[j], k.maxGen[j-1])
		}
	}
	stale := 0
	// Only the writes called after a.at can be stale by it: the last
	// ones, as lines are read soon after they are written.
	for j := len(k.written) - 1; j >= 0 && k.written[j].at > a.at; j-- {
		if k.written[j].gen < a.gen {
			k.written = slices.Delete(k.written, j, j+1)
			stale++
		}
	}
	return stale
}

// write adds a write that returned OK, and returns 1 if it is stale by
// an acquisition known (then it is not kept), 0 otherwise.
func (k *keyStale) write(w stamp) int {
	// The acquisitions that returned before the call: acquired[:i].
	i, _ := slices.BinarySearchFunc(k.acquired, w.at, func(x stamp, at int64) int { return cmp.Compare(x.at, at) })
	if i > 0 && k.maxGen[i-1] > w.gen {
		return 1
	}
	j, _ := slices.BinarySearchFunc(k.written, w.at, func(x stamp, at int64) int { return cmp.Compare(x.at, at+1) })
	k.written = slices.Insert(k.written, j, w)
	return 0
}
