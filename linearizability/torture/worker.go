package torture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/rivus/collab/gen"
	"github.com/rivus/collab/internal/sqlitelock"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/file"
	"github.com/rivus/collab/lease/sqlite"
	"github.com/rivus/collab/lease/store"
	lz "github.com/rivus/collab/linearizability"
	"github.com/rivus/collab/platform"
	platformsqlite "github.com/rivus/collab/platform/sqlite"
	"github.com/rivus/collab/policy"
)

// opTimeout bounds every operation of a worker, so that a worker whose
// peer is paused holding a fence still ends its operation (as Unknown).
const opTimeout = 5 * time.Second

// worker is one worker process's state.
type worker struct {
	a    assignment
	plat *platform.Platform // the stores' platform: without SQLite for the file store
	// lockPlat is plat for the process locks, but on the SQLite store
	// three workers in four (by number) take them through the kernel alone
	// (sqlitelock.KernelLocks, as the small collab does), so that holders of
	// the two kinds meet, and two through the kernel meet often: each
	// process takes them in one way only.
	lockPlat *platform.Platform
	repo     store.Repository
	mgr      *lease.Manager
	res      Resource
	rec      *lz.Recorder
	events   *os.File
	losses   *os.File // the leases it declared lost
	// takeovers are its takeovers on proof of death, and self its
	// identity, for the check of judgements (judged.go).
	takeovers *os.File
	self      platform.Identity
	commands  *os.File // the collab processes it started, opened at the first
	hist      *os.File // its history file, which its command processes' recorders share
	leaseRuns int      // its `collab lease run` rounds so far
	rng       *rand.Rand
	seq       int
}

// runWorker works until stop reaches its end (the controller closes
// the worker's stdin), then closes everything it holds, recorded.
func runWorker(a assignment, stop io.Reader) (err error) {
	w, err := openWorker(a)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, w.close()) }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, stop)
		cancel()
	}()
	for ctx.Err() == nil {
		if err := w.round(); err != nil {
			return err
		}
	}
	return nil
}

// openWorker opens the stores, the manager and the recorder.
func openWorker(a assignment) (*worker, error) {
	w := &worker{a: a, rng: rand.New(rand.NewPCG(uint64(a.Seed), uint64(a.Process)))}
	w.plat = platformsqlite.OS()
	if err := w.openStores(); err != nil {
		return nil, errors.Join(err, w.close())
	}
	w.lockPlat = w.plat
	if a.Store == StoreSQLite && a.Process%4 != 0 {
		p := *w.plat
		p.SQLite = sqlitelock.KernelLocks
		w.lockPlat = &p
	}
	if err := w.openRest(); err != nil {
		return nil, errors.Join(err, w.close())
	}
	return w, nil
}

// openStores opens the lease repository and the resource of the
// assignment's store.
func (w *worker) openStores() (err error) {
	switch w.a.Store {
	case StoreSQLite:
		var repo *sqlite.Repository
		var res *sqliteResource
		if repo, res, err = openSQLiteStores(w.plat, w.a.Dir); err == nil {
			w.repo, w.res = repo, res // never a typed nil in the interfaces
		}
		return err
	case StorePostgres:
		repo, res, err := openPostgres(w.a)
		if err == nil {
			w.repo, w.res = repo, res
		}
		return err
	case StoreFile:
		w.plat = platform.OS() // without SQLite: lock-file process locks
		var repo *file.Repository
		if repo, err = file.Open(w.plat, filepath.Join(w.a.Dir, leasesFiles)); err != nil {
			return err
		}
		w.repo = repo
		res, err := openFileResource(w.a.Dir, w.a.Process)
		if err == nil {
			w.res = res
		}
		return err
	}
	open, ok := registered(w.a.Store)
	if !ok {
		return fmt.Errorf("store %q is not registered in this program (torture.Register, before WorkerMain)", w.a.Store)
	}
	return retrying(func(ctx context.Context) (err error) {
		w.repo, w.res, err = open(ctx, w.a.Dir, w.a.Process)
		return err
	})
}

// openRest opens the files and the manager.
func (w *worker) openRest() error {
	pol, err := loadPolicy(w.a.Policy)
	if err != nil {
		return err
	}
	if w.events, err = appendFile(procFile(w.a.Dir, eventsDir, w.a.Process, ".log")); err != nil {
		return err
	}
	if w.losses, err = appendFile(procFile(w.a.Dir, eventsDir, w.a.Process, lossExt)); err != nil {
		return err
	}
	if w.takeovers, err = appendFile(procFile(w.a.Dir, eventsDir, w.a.Process, takeoverExt)); err != nil {
		return err
	}
	if w.self, err = w.plat.Process.Self(); err != nil {
		return err
	}
	if err := writeSelf(w.a.Dir, w.a.Process, w.self); err != nil {
		return err
	}
	if w.hist, err = appendFile(procFile(w.a.Dir, historyDir, w.a.Process, ".jsonl")); err != nil {
		return err
	}
	// The history file stays open until the process exits: the kernel
	// keeps what was written whatever way it ends.
	w.rec = lz.NewRecorder(w.hist, w.a.Process, platform.RealClock())
	w.mgr, err = lease.NewManager(lease.Config{TTL: w.a.TTL, Heartbeat: w.a.Heartbeat,
		Repository: w.repo, Platform: w.plat, Policy: pol, OnEvent: w.onEvent})
	return err
}

// onEvent counts takeovers and losses for the progress line.
func (w *worker) onEvent(e lease.Event) {
	switch e.Kind {
	case lease.TakenOver:
		w.note(noteTakeover)
		w.noteTakeover(e)
	case lease.Lost:
		w.noteLoss(e)
	}
}

// note appends one word to the events file, in one write.
func (w *worker) note(word string) { _, _ = w.events.WriteString(word + "\n") }

func (w *worker) close() error {
	var errs []error
	if w.mgr != nil {
		errs = append(errs, w.mgr.Close())
	}
	if w.res != nil {
		errs = append(errs, w.res.Close())
	}
	if c, ok := w.repo.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	if w.events != nil {
		errs = append(errs, w.events.Close())
	}
	if w.losses != nil {
		errs = append(errs, w.losses.Close())
	}
	if w.takeovers != nil {
		errs = append(errs, w.takeovers.Close())
	}
	if w.commands != nil {
		errs = append(errs, w.commands.Close())
	}
	return errors.Join(errs...)
}

// appendFile opens path for appending, creating it.
func appendFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
}

// loadPolicy compiles the lease spec at path; "" is the shipped policy.
// Config.Validate calls it too, so that a spec the workers would refuse
// is refused before any of them starts.
func loadPolicy(path string) (policy.Policy, error) {
	if path == "" {
		return nil, nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	spec, err := gen.Parse(path, src)
	if err != nil {
		return nil, err
	}
	t, err := gen.Validate(spec)
	if err != nil {
		return nil, err
	}
	// lease.NewManager refuses a policy of another family.
	if t.Family != leaseFamily {
		return nil, fmt.Errorf("%s: machine %s is of family %q; want %q", path, t.Name, t.Family, leaseFamily)
	}
	return policy.Compile(t), nil
}

// leaseFamily is the family of the policies lease.Config.Policy takes.
const leaseFamily = "lease"

// round does one random thing: a lease round (most often), a process
// lock round or a break, on a random key, or a leader round, after a
// short random pause.
func (w *worker) round() error {
	key := fmt.Sprintf("k%d", w.rng.IntN(w.a.Keys))
	w.nap()
	switch n := w.rng.IntN(40); {
	case n < 8 && w.sharesLocks():
		// Process locks on two keys at most, so that holders meet often
		// enough to be refused, and a broken exclusion shows.
		return w.lockRound(fmt.Sprintf("k%d", w.rng.IntN(min(w.a.Keys, 2))))
	case n < 13: // breaks are refused mostly: a dead holder is soon taken over
		return w.breakOp(key)
	case n < 15:
		return w.leaderRound()
	case n < 17 && w.a.Collab != "" && w.sharesLocks():
		return w.commandLockRound()
	case n < 19 && w.a.Collab != "" && leaseRunStore(w.a) != "":
		return w.leaseRunRound(key)
	}
	return w.leaseRound(key)
}

// sharesLocks reports whether this worker takes process locks with the
// others: not as lock files from a pid namespace of its own, since a lock
// file stamped in another process table cannot be judged, and a dead
// holder's stays held until removed (plock's doc), where a SQLite lock is
// the kernel's, whatever the namespace.
func (w *worker) sharesLocks() bool { return !(w.a.NewPIDNamespace && w.a.Store == StoreFile) }

// nap sleeps a few milliseconds, and now and then most of a TTL (holding
// whatever it holds), so that renewals, pauses and takeovers meet.
func (w *worker) nap() {
	d := time.Duration(w.rng.IntN(5)) * time.Millisecond
	if w.rng.IntN(20) == 0 {
		d = w.a.TTL * time.Duration(1+w.rng.IntN(8)) / 10
	}
	time.Sleep(d)
}

// openSQLiteStores opens the run's lease database and resource. Workers
// starting together race to set them up, and SQLite reports a switch to
// WAL that meets another busy at once, without waiting: each is retried.
func openSQLiteStores(p *platform.Platform, dir string) (*sqlite.Repository, *sqliteResource, error) {
	var repo *sqlite.Repository
	err := retrying(func(context.Context) (err error) {
		repo, err = sqlite.Open(p, filepath.Join(dir, leasesDB))
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var res *sqliteResource
	err = retrying(func(context.Context) (err error) {
		res, err = openSQLiteResource(p, dir)
		return err
	})
	if err != nil {
		return nil, nil, errors.Join(err, repo.Close())
	}
	return repo, res, nil
}

// retrying calls open until it succeeds or openRetry passes, each try
// bounded by opTimeout: a store may be busy (workers racing to set up a
// SQLite database) or down (a PostgreSQL outage).
func retrying(open func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), openRetry)
	defer cancel()
	for {
		try, stop := context.WithTimeout(ctx, opTimeout)
		err := open(try)
		stop()
		if err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond) // a retry's back-off, not a synchronisation
	}
}
