package modelcheck

import (
	"sync/atomic"
)

// The parallel search (Options.Workers > 1) finds what the sequential one
// finds: the same states, moves, depth, verdict and trace. It expands a
// level in batches of worlds, each batch in three phases:
//
//  1. Expand (in parallel): each worker takes a contiguous run of the
//     batch's worlds, calls Next on each in order, checks the move
//     invariants, and gathers the moves that need a probe (not back to
//     the world itself, not in the worker's recent set), each into the
//     bucket of its shard of the visited set. A broken move, or a world
//     that owes work and has no move, ends the worker's run there.
//  2. Probe (in parallel): the visited set is split into shards by hash,
//     and each shard is probed by one worker at a time, with its moves in
//     the batch's order (runs in order, moves in Next's order), so that of
//     the moves to one world the first in that order finds it new, as in
//     the sequential search. A new world's invariants are checked there.
//  3. Record (in order): the new worlds get their discovery numbers, their
//     parents and the next level, and the first of a stop (a violated
//     invariant, a limit, a broken move, owed work) in the batch's order
//     ends the search where the sequential search would end it.
//
// A world a worker's recent set holds was gathered by that worker before,
// in an earlier batch or earlier in its run, so dropping the move to it
// drops only a later move to the same world: the first stays.

// parallelBatch is how many worlds of a level a batch expands: enough
// to keep the workers busy between the pool's barriers (see pool), few
// enough for a batch's moves to stay in a core's cache between its
// phases. Tests make it small, so that batches meet within small levels.
var parallelBatch = 1 << 10

// shardsPerWorker spreads the shards over the workers in phase 2.
const shardsPerWorker = 8

// pmove is a move gathered in phase 1, in Next's order, as phase 3
// reads it: where its probe is.
type pmove struct {
	from  int32  // the world of the level it is a move of
	ord   uint32 // its ordinal among that world's moves
	shard uint32 // its probe is the run's buckets[shard][pos]
	pos   uint32
}

// pprobe is a move gathered in phase 1, as phase 2 reads it: in its
// shard's bucket, so that phase 2 reads a bucket in order, and writes
// what it found there, so that the workers of phase 2 write apart.
type pprobe[W comparable] struct {
	key  W
	hash uint64
	// inv, set in phase 2: -1 when the world was visited already,
	// otherwise 0, or 1 + the index of the first invariant it breaks.
	inv int32
}

// prun is one worker's run of a batch: the worlds [lo, hi) of the level.
type prun[W comparable] struct {
	lo, hi  int32
	moves   []pmove
	buckets [][]pprobe[W] // per shard, in order
	yields  []uint32      // per world of the run, the moves Next yielded
	// stop is the world whose broken move or owed work ends the run
	// (-1: none), and what it is.
	stop   int32
	broken *broken[W]
	owed   string

	// The world being expanded, as onMove reads it; yield is onMove,
	// bound once, so that expanding a world allocates nothing.
	p      *parallel[W]
	recent *recentSet[W]
	from   int32
	ord    uint32
	yield  func(string, W)

	_ [128]byte // keeps the runs, which their workers write at every move, off each other's cache lines
}

// pshard is one shard of the visited set: one of the three kinds.
type pshard[W comparable] struct {
	exact  *worldSet[W]
	pairs  *pairSet
	prints *printSet
	sink   uint32   // keeps probe's reads from being optimised away
	_      [36]byte // keeps shards that workers write at once off one cache line
}

func (sh *pshard[W]) touch(h uint64) uint32 {
	switch {
	case sh.prints != nil:
		return sh.prints.touch(h)
	case sh.pairs != nil:
		return sh.pairs.touch(h)
	}
	return sh.exact.touch(h)
}

func (sh *pshard[W]) add(w *W, h uint64, hs *hasher[W]) bool {
	switch {
	case sh.prints != nil:
		return sh.prints.add(h)
	case sh.pairs != nil:
		return sh.pairs.add(hs.pair(w), h)
	}
	return sh.exact.add(w, h, hs)
}

// parallel is the state of a parallel search.
type parallel[W comparable] struct {
	s       *search[W]
	workers int
	shards  []pshard[W]
	mask    uint64 // shard of a hash: h & mask (the sets place by the top bits)
	runs    []prun[W]
	recents []recentSet[W]             // per worker
	nexts   []func(W, func(string, W)) // per worker: Model.Fork's, or Next
	pool    *pool
}

func (s *search[W]) runParallel() {
	p := &parallel[W]{s: s, workers: s.opts.Workers}
	n := 1
	for n < p.workers*shardsPerWorker {
		n *= 2
	}
	p.shards, p.mask = make([]pshard[W], n), uint64(n-1)
	for i := range p.shards {
		switch {
		case s.opts.Fingerprint:
			p.shards[i].prints = newPrintSet()
		case s.hasher.words:
			p.shards[i].pairs = newPairSet(s.hasher.seed)
		default:
			p.shards[i].exact = newWorldSet[W]()
		}
	}
	defer p.releaseShards()
	p.pool = newPool(p.workers)
	defer p.pool.stop()
	p.runs = make([]prun[W], p.workers)
	p.nexts = make([]func(W, func(string, W)), p.workers)
	for i := range p.runs {
		p.runs[i].buckets = make([][]pprobe[W], n)
		p.nexts[i] = s.m.Next
		if s.m.Fork != nil {
			p.nexts[i] = s.m.Fork()
		}
	}
	s.result.Model = s.m.Name
	for i, w := range s.m.Init {
		w = s.canonical(w)
		h := s.hasher.hash(&w)
		if !p.shards[h&p.mask].add(&w, h, &s.hasher) {
			continue
		}
		s.discover(&w, -1, uint32(i), s.firstBroken(&w))
		if s.stop {
			return
		}
		if p.recents == nil {
			p.recents = make([]recentSet[W], p.workers)
			for k := range p.recents {
				p.recents[k] = newRecentSet(w)
			}
		}
	}
	for len(s.next) > 0 && !s.stop {
		s.level, s.next = s.next, s.level[:0]
		s.result.Depth++
		for lo := 0; lo < len(s.level) && !s.stop; lo += parallelBatch {
			p.batch(int32(lo), int32(min(lo+parallelBatch, len(s.level))))
		}
	}
	if !s.stop {
		s.finish(Passed, "")
	}
}

// releaseShards frees the shards' tables where they were mapped outside
// the Go heap (see table): the search is over.
func (p *parallel[W]) releaseShards() {
	for i := range p.shards {
		p.shards[i].pairs.release()
		p.shards[i].prints.release()
	}
}

// batch runs the three phases on the level's worlds [lo, hi).
func (p *parallel[W]) batch(lo, hi int32) {
	per := (hi - lo + int32(p.workers) - 1) / int32(p.workers)
	p.pool.run(func(k int) {
		r := &p.runs[k]
		r.lo, r.hi = min(lo+int32(k)*per, hi), min(lo+int32(k+1)*per, hi)
		p.expand(r, &p.recents[k], p.nexts[k])
	})
	var next atomic.Int64
	p.pool.run(func(int) {
		for sh := int(next.Add(1) - 1); sh < len(p.shards); sh = int(next.Add(1) - 1) {
			p.probe(sh)
		}
	})
	p.record()
}

// expand is phase 1 for one run.
func (p *parallel[W]) expand(r *prun[W], recent *recentSet[W], next func(W, func(string, W))) {
	s := p.s
	r.moves, r.yields, r.stop, r.broken, r.owed = r.moves[:0], r.yields[:0], -1, nil, ""
	for i := range r.buckets {
		r.buckets[i] = r.buckets[i][:0]
	}
	if r.yield == nil {
		r.p, r.yield = p, r.onMove
	}
	r.recent = recent
	for j := r.lo; j < r.hi; j++ {
		r.from, r.ord = j, 0
		next(s.level[j].world, r.yield)
		r.yields = append(r.yields, r.ord)
		if r.broken != nil {
			r.stop = j
			return
		}
		if r.ord == 0 && s.m.Owes != nil {
			if r.owed = s.m.Owes(s.level[j].world); r.owed != "" {
				r.stop = j
				return
			}
		}
	}
}

// onMove is Next's yield in phase 1: it screens the move as the
// sequential search does and gathers it into its shard's bucket.
func (r *prun[W]) onMove(label string, to W) {
	if r.broken != nil {
		return // counted up to the broken move, as the sequential search counts
	}
	o := r.ord
	r.ord++
	p := r.p
	h, keep := p.s.screen(&p.s.level[r.from].world, label, &to, r.recent, &r.broken)
	if !keep {
		return
	}
	sh := h & p.mask
	r.moves = append(r.moves, pmove{from: r.from, ord: o, shard: uint32(sh), pos: uint32(len(r.buckets[sh]))})
	r.buckets[sh] = append(r.buckets[sh], pprobe[W]{key: to, hash: h})
}

// probe is phase 2 for one shard: its moves of every run, in order, a
// group at a time, whose home slots are read first so that their cache
// misses overlap (see search.prefetch).
func (p *parallel[W]) probe(sh int) {
	s := p.s
	shard := &p.shards[sh]
	for k := range p.runs {
		r := &p.runs[k]
		bucket := r.buckets[sh]
		for len(bucket) > 0 {
			group := bucket[:min(len(bucket), batchMoves)]
			bucket = bucket[len(group):]
			var sum uint32
			for i := range group {
				sum += shard.touch(group[i].hash)
			}
			shard.sink += sum
			for i := range group {
				pr := &group[i]
				inv := int32(-1)
				if shard.add(&pr.key, pr.hash, &s.hasher) {
					inv = int32(s.firstBroken(&pr.key))
				}
				pr.inv = inv
			}
		}
	}
}

// record is phase 3: the runs' new worlds in order, and the first stop.
func (p *parallel[W]) record() {
	s := p.s
	for k := range p.runs {
		r := &p.runs[k]
		next := 0 // the run's next move
		for j := r.lo; j < r.hi; j++ {
			yields := r.yields[j-r.lo]
			for ; next < len(r.moves) && r.moves[next].from == j; next++ {
				mv := &r.moves[next]
				pr := &r.buckets[mv.shard][mv.pos]
				if pr.inv < 0 {
					continue
				}
				s.discover(&pr.key, s.level[j].index, mv.ord, int(pr.inv))
				if s.stop {
					s.result.Moves += int(mv.ord) + 1
					return
				}
			}
			s.result.Moves += int(yields)
			if r.stop == j {
				if r.broken != nil {
					s.violate(r.broken.property, r.broken.reason, s.level[j].index, &r.broken.step)
				} else {
					s.violate(owesWork, owesReason+r.owed, s.level[j].index, nil)
				}
				return
			}
		}
	}
}
