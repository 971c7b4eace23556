package torture

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// EnvWorker is the environment variable by which a started process
// knows it is a worker: its value is the worker's assignment as JSON.
const EnvWorker = "COLLAB_TORTURE_WORKER"

// assignment is what the controller tells a worker.
type assignment struct {
	Dir       string        `json:"dir"`
	Store     string        `json:"store"`
	Seed      int64         `json:"seed"`
	Process   int           `json:"process"` // the worker's process number in the history
	Keys      int           `json:"keys"`
	TTL       time.Duration `json:"ttl"`
	Heartbeat time.Duration `json:"heartbeat"`
	Policy    string        `json:"policy,omitempty"`
	// Controller is the pid of the controller that started the worker:
	// the switch works only in its children (or, with NewPIDNamespace, in
	// process 1 of a new pid namespace, whose parent it cannot see).
	Controller int `json:"controller"`
	// NewPIDNamespace: the worker runs in a pid namespace of its own.
	NewPIDNamespace bool `json:"newPIDNamespace,omitempty"`
	// Collab is Config.Collab.
	Collab string `json:"collab,omitempty"`
	// CollabLock is Config.CollabLock.
	CollabLock string `json:"collabLock,omitempty"`
	// PostgresURL and Schema locate StorePostgres.
	PostgresURL string `json:"postgresURL,omitempty"`
	Schema      string `json:"schema,omitempty"`
}

// The layout of a run directory.
const (
	historyDir  = "history" // p<N>.jsonl: one recorder's file a process
	eventsDir   = "events"  // p<N>.log: one word a line a worker writes for the progress line
	logsDir     = "logs"    // p<N>.log: a worker's stderr
	locksDir    = "locks"   // the process locks, one a key
	leasesDB    = "leases.db"
	leasesFiles = "leases"
	resourceDB  = "resource.db"
	resourceDir = "resource"
)

// controllerProcess is the controller's process number in the history.
const controllerProcess = 0

func procFile(dir, sub string, p int, ext string) string {
	return filepath.Join(dir, sub, fmt.Sprintf("p%d%s", p, ext))
}

// WorkerMain runs this process as a campaign worker when the environment
// says it is one (EnvWorker) and its parent is the controller the
// assignment names, and then exits: it does not return in a worker. In
// any other process it returns at once, having removed EnvWorker from
// its environment, so that a variable inherited by mistake (exported by a
// shell, or passed down by a command a worker ran) makes no worker and
// goes no further. Programs that can be a campaign's Command (collab,
// test binaries) call it first thing in main or TestMain.
func WorkerMain() {
	v, ok := os.LookupEnv(EnvWorker)
	if !ok {
		return
	}
	_ = os.Unsetenv(EnvWorker)
	var a assignment
	if err := json.Unmarshal([]byte(v), &a); err != nil {
		return
	}
	if a.Controller != os.Getppid() {
		if !a.NewPIDNamespace {
			return
		}
		switch own, err := startedInNewPIDNamespace(); {
		case !own:
			return
		case err != nil:
			fmt.Fprintf(os.Stderr, "torture worker p%d: %v\n", a.Process, err)
			os.Exit(1)
		}
	}
	if err := runWorker(a, os.Stdin); err != nil {
		fmt.Fprintf(os.Stderr, "torture worker p%d: %v\n", a.Process, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// procLockPath is the process lock of key.
func procLockPath(dir, key string) string { return filepath.Join(dir, locksDir, key+".lock") }
