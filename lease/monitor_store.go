package lease

import (
	"reflect"
	"sync"

	"github.com/rivus/collab/lease/store"
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
	m map[storeKey]store.Revision
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
	return storeFloors.m[storeKey{repo, key}]
}

// storeSeen notes that rev of key was seen in repo.
func storeSeen(repo store.Repository, key string, rev store.Revision) {
	if !reflect.ValueOf(repo).Comparable() {
		return
	}
	storeFloors.Lock()
	defer storeFloors.Unlock()
	k := storeKey{repo, key}
	if storeFloors.m == nil {
		storeFloors.m = map[storeKey]store.Revision{}
	}
	if _, ok := storeFloors.m[k]; !ok && len(storeFloors.m) >= storeFloorsMax {
		for drop := range storeFloors.m {
			delete(storeFloors.m, drop)
			break
		}
	}
	storeFloors.m[k] = max(storeFloors.m[k], rev)
}
