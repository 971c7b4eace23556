package modelcheck

import (
	"fmt"
	"time"
)

const (
	// progressCheckMask sets how often (in new worlds) the clock is read
	// for the timeout and progress lines: reading it every time would cost
	// more than exploring.
	progressCheckMask = 1<<14 - 1
	// batchMoves is about how many moves are gathered before they are
	// probed: enough for their cache misses to overlap, few enough for the
	// slots they touch to stay in the cache until they are probed.
	batchMoves = 512
)

// Check explores every world of m reachable from its initial worlds, within
// opts' limits, and returns the verdict. It panics, naming the field,
// when a limit of opts is negative (see Options).
func Check[W comparable](m Model[W], opts Options) Result[W] {
	opts.validate()
	s := &search[W]{m: m, opts: opts, start: time.Now(), hasher: newHasher[W]()}
	switch {
	case opts.Fingerprint:
		s.prints = newPrintSet()
	case s.hasher.words:
		s.pairs = newPairSet(s.hasher.seed)
	default:
		s.exact = newWorldSet[W]()
	}
	if opts.ProgressEvery == 0 {
		s.opts.ProgressEvery = 5 * time.Second
	}
	s.nextReport = s.opts.ProgressEvery
	s.collect = s.onMove
	if opts.Workers > 1 {
		s.runParallel()
	} else {
		defer s.releaseSet()
		s.run()
	}
	return s.result
}

// releaseSet frees the visited set's table where it was mapped outside
// the Go heap (see table): the search is over.
func (s *search[W]) releaseSet() {
	s.pairs.release()
	s.prints.release()
}

type search[W comparable] struct {
	m      Model[W]
	opts   Options
	start  time.Time
	result Result[W]

	hasher hasher[W]
	exact  *worldSet[W] // visited worlds, unless fingerprinting or pairs
	pairs  *pairSet     // visited worlds of two plain words, unless fingerprinting
	prints *printSet    // visited fingerprints, when fingerprinting
	recent recentSet[W] // some visited worlds, checked before the set (recent.go)

	// parent and ordinal, indexed by discovery order, rebuild traces: the
	// world was reached from parent[i] by its ordinal[i]-th move (for an
	// initial world, parent is -1 and ordinal indexes Init).
	parent  []int32
	ordinal []uint32

	level, next []node[W]  // the level being expanded and the one below
	moves       []move[W]  // the moves of a batch of the level to probe, in Next's order
	from        int32      // the world of the level whose moves Next yields
	ord         uint32     // how many moves it has yielded so far
	yielded     uint32     // how many moves Next yielded in this batch
	broken      *broken[W] // a move Next yielded that breaks a move invariant
	collect     func(string, W)
	sink        uint32 // keeps prefetch's reads from being optimised away
	stop        bool   // a violation or limit ends the search
	nextReport  time.Duration
}

type node[W comparable] struct {
	world W
	index int32
}

// move is a move gathered from Next that needs a probe of the visited
// set: key is the canonical form of the world it yields, which the set
// holds, and hash key's hash; it is the ord-th move of the level's
// from-th world, and the seq-th move yielded in its batch.
type move[W comparable] struct {
	key  W
	hash uint64
	from int32
	ord  uint32
	seq  uint32
}

// broken is a move that breaks a move invariant, kept until Next returns:
// building the trace calls Next again, which must not happen inside it.
type broken[W comparable] struct {
	property, reason string
	step             Step[W]
}

func (s *search[W]) run() {
	s.result.Model = s.m.Name
	for i, w := range s.m.Init {
		w = s.canonical(w)
		s.visit(&w, s.hasher.hash(&w), -1, uint32(i))
		if s.stop {
			return
		}
		if i == 0 {
			s.recent = newRecentSet(w)
		}
	}
	for len(s.next) > 0 && !s.stop {
		s.level, s.next = s.next, s.level[:0]
		s.result.Depth++
		for done := 0; done < len(s.level) && !s.stop; {
			done = s.expandBatch(done)
		}
	}
	if !s.stop {
		s.finish(Passed, "")
	}
}

// expandBatch expands the worlds of the level from the done-th on until
// about batchMoves moves are gathered, and returns how many of the level's
// worlds are expanded then. It checks each move as Next yields it and
// gathers those that need a probe; flush then probes them in Next's order.
// Whatever the search finds (violations, limits, states, moves, traces)
// is what it would find probing each move when yielded: a violation found
// while gathering waits until the moves gathered before it are probed.
func (s *search[W]) expandBatch(done int) int {
	n := done
	for n < len(s.level) && len(s.moves) < batchMoves {
		at := &s.level[n]
		s.from, s.ord = int32(n), 0
		s.m.Next(at.world, s.collect)
		n++
		var owed string
		if s.broken == nil && s.ord == 0 && s.m.Owes != nil {
			owed = s.m.Owes(at.world)
		}
		if s.broken == nil && owed == "" {
			continue
		}
		if s.flush(); s.stop {
			return n
		}
		if b := s.broken; b != nil {
			s.violate(b.property, b.reason, at.index, &b.step)
		} else {
			s.violate(owesWork, owesReason+owed, at.index, nil)
		}
		return n
	}
	s.flush()
	return n
}

// flush reads the slots of the gathered moves, probes them in Next's
// order, counts the moves yielded up to the last one probed, and empties
// the batch.
func (s *search[W]) flush() {
	s.prefetch()
	counted := s.yielded
	for i := range s.moves {
		mv := &s.moves[i]
		s.visit(&mv.key, mv.hash, s.level[mv.from].index, mv.ord)
		if s.stop {
			counted = mv.seq
			break
		}
	}
	s.result.Moves += int(counted)
	s.moves, s.yielded = s.moves[:0], 0
}

// onMove is Next's yield. It checks the move invariants and gathers the
// move for a probe, unless the move leads back to the world itself or to
// one of the recent worlds, which are known to be visited (or about to be,
// by a move gathered earlier). It fills the move in place, as building it
// aside and copying it costs more than the rest.
func (s *search[W]) onMove(label string, to W) {
	ord := s.ord
	s.ord++
	if s.broken != nil {
		return
	}
	s.yielded++
	h, keep := s.screen(&s.level[s.from].world, label, &to, &s.recent, &s.broken)
	if !keep {
		return
	}
	n := len(s.moves)
	if n == cap(s.moves) {
		s.moves = append(s.moves, move[W]{})
	}
	s.moves = s.moves[:n+1]
	mv := &s.moves[n]
	mv.key, mv.hash, mv.from, mv.ord, mv.seq = to, h, s.from, ord, s.yielded
}

// screen checks the move invariants on the move from from to *to,
// recording a broken one in *b, makes *to canonical, and reports its hash
// and whether it needs a probe: not when it breaks an invariant, leads
// back to from, or to a world of recent (see onMove).
func (s *search[W]) screen(from *W, label string, to *W, recent *recentSet[W], b **broken[W]) (uint64, bool) {
	for _, inv := range s.m.Moves {
		if err := inv.Check(*from, label, *to); err != nil {
			*b = &broken[W]{inv.Name, err.Error(), Step[W]{label, *to}}
			return 0, false
		}
	}
	if s.m.Canonical != nil {
		*to = s.m.Canonical(*to)
	}
	if s.hasher.equal(to, from) {
		return 0, false
	}
	h := s.hasher.hash(to)
	return h, !recent.has(to, h, &s.hasher)
}

// prefetch reads the home slot of every gathered move. The reads do not
// depend on each other, so the processor overlaps their cache misses,
// where the probes, which branch on what they read, would take them one
// at a time.
func (s *search[W]) prefetch() {
	var sum uint32
	switch {
	case s.prints != nil:
		for i := range s.moves {
			sum += s.prints.touch(s.moves[i].hash)
		}
	case s.pairs != nil:
		for i := range s.moves {
			sum += s.pairs.touch(s.moves[i].hash)
		}
	default:
		for i := range s.moves {
			sum += s.exact.touch(s.moves[i].hash)
		}
	}
	s.sink += sum
}

// visit adds w, whose hash is h, reached by the given move, if it is new,
// and checks it.
func (s *search[W]) visit(w *W, h uint64, parent int32, ord uint32) {
	if !s.add(w, h) {
		return
	}
	s.discover(w, parent, ord, s.firstBroken(w))
}

// discover records w, new, reached from parent by its ord-th move: it
// ends the search at the state limit, or when w breaks an invariant
// (broken, from firstBroken), and otherwise puts w in the next level.
func (s *search[W]) discover(w *W, parent int32, ord uint32, broken int) {
	if s.opts.MaxStates > 0 && s.result.States >= s.opts.MaxStates {
		s.finish(Incomplete, fmt.Sprintf("state limit %d reached with worlds left to visit", s.opts.MaxStates))
		return
	}
	idx := int32(len(s.parent))
	s.parent = append(s.parent, parent)
	s.ordinal = append(s.ordinal, ord)
	s.result.States++
	if broken > 0 {
		inv := s.m.Invariants[broken-1]
		s.violate(inv.Name, inv.Check(*w).Error(), idx, nil)
		return
	}
	s.next = append(s.next, node[W]{*w, idx})
	if s.result.States&progressCheckMask == 0 {
		s.checkLimits()
	}
}

// firstBroken returns 1 + the index of the first invariant w breaks, or
// 0 when it breaks none.
func (s *search[W]) firstBroken(w *W) int {
	for i, inv := range s.m.Invariants {
		if inv.Check(*w) != nil {
			return i + 1
		}
	}
	return 0
}

func (s *search[W]) add(w *W, h uint64) bool {
	switch {
	case s.prints != nil:
		return s.prints.add(h)
	case s.pairs != nil:
		return s.pairs.add(s.hasher.pair(w), h)
	}
	return s.exact.add(w, h, &s.hasher)
}

func (s *search[W]) checkLimits() {
	elapsed := time.Since(s.start)
	if s.opts.Progress != nil && elapsed >= s.nextReport {
		s.nextReport = elapsed + s.opts.ProgressEvery
		fmt.Fprintf(s.opts.Progress, "%s: %d states, %.0f states/s, depth %d\n",
			s.m.Name, s.result.States, float64(s.result.States)/elapsed.Seconds(), s.result.Depth)
	}
	if s.opts.Timeout > 0 && elapsed >= s.opts.Timeout {
		s.finish(Incomplete, fmt.Sprintf("time limit %v", s.opts.Timeout))
	}
}

func (s *search[W]) finish(v Verdict, stopped string) {
	s.stop = true
	s.result.Verdict, s.result.Stopped = v, stopped
	s.result.Elapsed = time.Since(s.start)
}

// The property and reason of a world that owes work and has no move.
const (
	owesWork   = "owes work"
	owesReason = "no move is possible, yet "
)

// violate ends the search with the trace to world idx, plus last when the
// violation is a move out of it.
func (s *search[W]) violate(property, reason string, idx int32, last *Step[W]) {
	trace := s.replay(idx)
	if last != nil {
		trace = append(trace, *last)
	}
	reason = s.restate(property, reason, trace, last != nil)
	s.result.Violation = &Violation[W]{Property: property, Reason: reason, Trace: trace}
	s.finish(Violated, "")
}
