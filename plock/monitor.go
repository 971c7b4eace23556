package plock

import (
	"bytes"
	"fmt"

	"github.com/rivus/collab/internal/contract"
	"github.com/rivus/collab/platform"
)

// The contract monitor checks the duties of the runtime around the turn
// policy's steps that internal/turnstep (the step the turn world checks)
// cannot see, because they are the acquisitions' I/O:
//
//  1. a task attempts the lock only while it owns its lock's turn, and
//     while no other task of this process attempts or holds the lock;
//  2. a task releases only the lock it holds, and the lock is held by at
//     most one task of this process at a time;
//  3. a lock file is reclaimed only under the reclaim lock, and only while
//     it still holds the stamp that was judged dead: the one a new holder
//     may have written since is never removed.
//
// It runs where the build tag collabmonitor is set (make test and the
// campaign's workers); the constant monitoring is false otherwise, and
// the compiler drops every call. A broken duty ends the process
// (internal/contract) with a report.

// turnMonitor is the monitor's state, under registry.mu.
type turnMonitor struct {
	attempting map[turnKey]*task // the task attempting each lock
	holding    map[turnKey]*task // the task holding each lock
}

// attempting checks that t may attempt its lock now (duty 1).
func (r *registry) attempting(t *task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	mon := &r.mon
	switch {
	case t.q.owner != t:
		r.broke(t, "a task attempts the lock without owning its turn")
	case mon.attempting[t.key] != nil:
		r.broke(t, "two tasks of this process attempt the lock at once")
	case mon.holding[t.key] != nil:
		r.broke(t, "a task attempts the lock while another task of this process holds it")
	}
	if mon.attempting == nil {
		mon.attempting, mon.holding = map[turnKey]*task{}, map[turnKey]*task{}
	}
	mon.attempting[t.key] = t
}

// attempted notes the end of t's attempt; held says it took the lock.
func (r *registry) attempted(t *task, held bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.mon.attempting, t.key)
	if held {
		r.mon.holding[t.key] = t
	}
}

// released checks that t held the lock it released (duty 2).
func (r *registry) released(t *task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mon.holding[t.key] != t {
		r.broke(t, "a task releases a lock it does not hold")
	}
	delete(r.mon.holding, t.key)
}

// broke ends the process with the broken duty.
func (r *registry) broke(t *task, duty string) {
	contract.Fail(fmt.Sprintf("plock: contract monitor: lock %s: %s (task in state %s)\n",
		t.key.path, duty, t.pol.Table().States[t.state].Name))
}

// reclaiming checks, as the lock file at b.path is about to be moved
// away, that it still holds the stamp judged dead (duty 3). Nothing else
// can change the file meanwhile: its path is taken, so no holder can
// create it, and the reclaim lock keeps other reclaimers out.
func (b *fileBackend) reclaiming(judged []byte) {
	data, err := b.p.FS.ReadFile(b.path, platform.MaxIdentityJSON)
	if err != nil || !bytes.Equal(data, judged) {
		contract.Fail(fmt.Sprintf("plock: contract monitor: lock file %s: reclaimed, but it no longer holds the stamp judged dead (it holds %q, %v)\n", b.path, data, err))
	}
}
