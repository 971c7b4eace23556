package lease

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/rivus/collab/internal/contract"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// storeFloors holds, per repository and key, the newest revision this
// process has seen: the floor below which no later save may succeed. Only
// monitored builds fill it. It keeps at most storeFloorsMax keys, dropping
// an arbitrary one to make room: a dropped floor costs only the chance to
// catch a stale write, so the map neither grows with the keys a long test
// uses nor keeps every repository alive. A repository that is not
// comparable (a struct value holding a map, say) is not watched.
var storeFloors struct {
	sync.Mutex
	m map[storeKey]*storeSeenKey
}

// storeSeenKey is what this process saw of one key of one repository.
type storeSeenKey struct {
	floor store.Revision // the newest revision seen
	// overs are the expected revisions of the last successful saves: a
	// revision is written over once, as revisions only grow, so a second
	// success over one (even of two saves under way together) is a lost
	// update.
	overs [4]store.Revision
	n     int // successful saves noted
}

const storeFloorsMax = 1024

type storeKey struct {
	repo store.Repository
	key  string
}

// storeFloor returns the newest revision of key seen in repo.
func storeFloor(repo store.Repository, key string) store.Revision {
	if !reflect.ValueOf(repo).Comparable() {
		return 0
	}
	storeFloors.Lock()
	defer storeFloors.Unlock()
	if s := storeFloors.m[storeKey{repo, key}]; s != nil {
		return s.floor
	}
	return 0
}

// storeSeen notes that rev of key was seen in repo.
func storeSeen(repo store.Repository, key string, rev store.Revision) {
	storeNote(repo, key, func(s *storeSeenKey) { s.floor = max(s.floor, rev) })
}

// storeSavedOver notes a successful save of key over expected that
// returned rev, and reports whether another success over expected was
// seen before it.
func storeSavedOver(repo store.Repository, key string, expected, rev store.Revision) (again bool) {
	storeNote(repo, key, func(s *storeSeenKey) {
		for _, o := range s.overs[:min(s.n, len(s.overs))] {
			again = again || o == expected
		}
		s.overs[s.n%len(s.overs)] = expected
		s.n++
		s.floor = max(s.floor, rev)
	})
	return again
}

// storeNote runs note on what this process saw of key in repo.
func storeNote(repo store.Repository, key string, note func(*storeSeenKey)) {
	if !reflect.ValueOf(repo).Comparable() {
		return
	}
	storeFloors.Lock()
	defer storeFloors.Unlock()
	k := storeKey{repo, key}
	if storeFloors.m == nil {
		storeFloors.m = map[storeKey]*storeSeenKey{}
	}
	s := storeFloors.m[k]
	if s == nil {
		if len(storeFloors.m) >= storeFloorsMax {
			for drop := range storeFloors.m {
				delete(storeFloors.m, drop)
				break
			}
		}
		s = &storeSeenKey{}
		storeFloors.m[k] = s
	}
	note(s)
}

// monitorBreak checks Break's duties as it is about to write tomb over
// rec: the tombstone's generation is the next after the record's, so that
// the broken holder's token is outranked; and a holder that may run on
// this process table is broken only with force. (The holder is judged
// again: a holder found dead cannot come back to life, one found alive
// may have died since, which is no breach.)
func monitorBreak(p *platform.Platform, key string, rec, tomb store.Snapshot, force bool) {
	var broke string
	switch {
	case tomb.Generation != rec.Generation+1:
		broke = fmt.Sprintf("a break writes generation %d over generation %d, not the next", tomb.Generation, rec.Generation)
	case !tomb.Released || !tomb.Broken:
		broke = "a break writes a record that is not a broken tombstone"
	case !force && mayRun(p.Process.Judge(rec.Holder).Liveness):
		broke = fmt.Sprintf("a break without force ends %v, which may still run on this process table", rec.Holder)
	default:
		return
	}
	contract.Fail(fmt.Sprintf("lease: contract monitor: key %q: %s\n", key, broke))
}
