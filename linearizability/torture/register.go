package torture

import (
	"context"
	"fmt"
	"sync"

	"github.com/rivus/collab/lease/store"
)

// Opener opens, in a worker process, the lease repository a campaign
// tests and the Resource that its fenced writes protect. dir is the run
// directory, where the opener may keep its files; process is the worker's
// number; ctx bounds the open, which is retried until it succeeds for a
// while (workers start together, and may race to set a store up). The
// worker closes the resource, and the repository if it is an io.Closer,
// when it ends.
type Opener func(ctx context.Context, dir string, process int) (store.Repository, Resource, error)

var (
	registryMu sync.Mutex
	registry   = map[string]Opener{}
)

// Register makes Config.Store = name run campaigns on the stores open
// opens: the workers, kills, pauses and linearizability check of the
// shipped stores, against a repository of the caller's (process locks
// stay SQLite's). Workers are re-executions of the program that runs
// the campaign, so register in that program before WorkerMain: in an
// init function, or first thing in TestMain. Register panics, as
// database/sql.Register does, on an empty name, a shipped store's name, a
// nil opener, or a name registered before.
func Register(name string, open Opener) {
	registryMu.Lock()
	defer registryMu.Unlock()
	switch {
	case name == "" || shipped(name):
		panic(fmt.Sprintf("torture: Register of store %q: the name is empty or a shipped store's", name))
	case open == nil:
		panic(fmt.Sprintf("torture: Register of store %q: the opener is nil", name))
	}
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("torture: Register of store %q twice", name))
	}
	registry[name] = open
}

// registered returns the opener registered as name.
func registered(name string) (Opener, bool) {
	registryMu.Lock()
	defer registryMu.Unlock()
	open, ok := registry[name]
	return open, ok
}

func isRegistered(name string) bool {
	_, ok := registered(name)
	return ok
}

// shipped reports whether name is one of the stores this package opens.
func shipped(name string) bool {
	return name == StoreSQLite || name == StoreFile || name == StorePostgres
}
