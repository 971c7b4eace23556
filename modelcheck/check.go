package modelcheck

import (
	"fmt"
	"hash/maphash"
	"time"
)

// progressCheckMask sets how often (in new worlds) the clock is read for
// the timeout and progress lines: reading it every time would cost more
// than exploring.
const progressCheckMask = 1<<14 - 1

// Check explores every world of m reachable from its initial worlds, within
// opts' limits, and returns the verdict.
func Check[W comparable](m Model[W], opts Options) Result[W] {
	s := &search[W]{m: m, opts: opts, start: time.Now(), exact: map[W]struct{}{}}
	if opts.Fingerprint {
		s.exact, s.prints, s.seed = nil, map[uint64]struct{}{}, maphash.MakeSeed()
	}
	if opts.ProgressEvery <= 0 {
		s.opts.ProgressEvery = 5 * time.Second
	}
	s.nextReport = s.opts.ProgressEvery
	s.yield = s.onMove
	s.run()
	return s.result
}

type search[W comparable] struct {
	m      Model[W]
	opts   Options
	start  time.Time
	result Result[W]

	exact  map[W]struct{}      // visited worlds, unless fingerprinting
	prints map[uint64]struct{} // visited fingerprints, when fingerprinting
	seed   maphash.Seed

	// parent and ordinal, indexed by discovery order, rebuild traces: the
	// world was reached from parent[i] by its ordinal[i]-th move (for an
	// initial world, parent is -1 and ordinal indexes Init).
	parent  []int32
	ordinal []uint32

	next       []node[W] // the frontier one level down
	cur        node[W]   // the world being expanded
	curMoves   uint32    // moves yielded so far by cur
	stop       bool      // a violation or limit ends the search
	yield      func(string, W)
	nextReport time.Duration
}

type node[W comparable] struct {
	world W
	index int32
}

func (s *search[W]) run() {
	s.result.Model = s.m.Name
	for i, w := range s.m.Init {
		s.visit(w, -1, uint32(i), "init")
		if s.stop {
			return
		}
	}
	for len(s.next) > 0 && !s.stop {
		level := s.next
		s.next = nil
		s.result.Depth++
		for _, n := range level {
			s.expand(n)
			if s.stop {
				return
			}
		}
	}
	s.finish(Passed, "")
}

func (s *search[W]) expand(n node[W]) {
	s.cur, s.curMoves = n, 0
	s.m.Next(n.world, s.yield)
	if s.stop || s.curMoves > 0 || s.m.Owes == nil {
		return
	}
	if owed := s.m.Owes(n.world); owed != "" {
		s.violate("owes work", "no move is possible, yet "+owed, n.index, nil)
	}
}

// onMove is Next's yield: it checks the move and visits its world.
func (s *search[W]) onMove(label string, to W) {
	if s.stop {
		return
	}
	ord := s.curMoves
	s.curMoves++
	s.result.Moves++
	for _, inv := range s.m.Moves {
		if err := inv.Check(s.cur.world, label, to); err != nil {
			s.violate(inv.Name, err.Error(), s.cur.index, &Step[W]{label, to})
			return
		}
	}
	s.visit(to, s.cur.index, ord, label)
}

// visit adds w, reached by the given move, if it is new, and checks it.
func (s *search[W]) visit(w W, parent int32, ord uint32, label string) {
	if s.m.Canonical != nil {
		w = s.m.Canonical(w)
	}
	if !s.add(w) {
		return
	}
	if s.opts.MaxStates > 0 && s.result.States >= s.opts.MaxStates {
		s.finish(Incomplete, fmt.Sprintf("state limit %d reached with worlds left to visit", s.opts.MaxStates))
		return
	}
	idx := int32(len(s.parent))
	s.parent = append(s.parent, parent)
	s.ordinal = append(s.ordinal, ord)
	s.result.States++
	for _, inv := range s.m.Invariants {
		if err := inv.Check(w); err != nil {
			s.violate(inv.Name, err.Error(), idx, nil)
			return
		}
	}
	s.next = append(s.next, node[W]{w, idx})
	if s.result.States&progressCheckMask == 0 {
		s.checkLimits()
	}
}

func (s *search[W]) add(w W) bool {
	if s.prints != nil {
		h := maphash.Comparable(s.seed, w)
		if _, ok := s.prints[h]; ok {
			return false
		}
		s.prints[h] = struct{}{}
		return true
	}
	if _, ok := s.exact[w]; ok {
		return false
	}
	s.exact[w] = struct{}{}
	return true
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

// violate ends the search with the trace to world idx, plus last when the
// violation is a move out of it.
func (s *search[W]) violate(property, reason string, idx int32, last *Step[W]) {
	trace := s.replay(idx)
	if last != nil {
		trace = append(trace, *last)
	}
	s.result.Violation = &Violation[W]{Property: property, Reason: reason, Trace: trace}
	s.finish(Violated, "")
}
