// Package lease provides leases with fencing tokens: a key has at most one
// live holder, whose generation (the [Token]) grows on every acquisition
// and never goes back.
//
// The package has the shape of golang.org/x/sync: it exports the manager
// and its errors, and links no storage driver. The port to storage is
// package lease/store, as database/sql/driver is to database/sql; the
// repositories are packages of their own (lease/sqlite, lease/file,
// lease/postgres), so that a program links only the one it uses, and
// [MemoryRepository] serves one process and tests.
//
// # Manager
//
// A [Manager] acquires leases for this process and renews the ones it
// holds. Each lease handle is an instance of the generated lease policy
// (spec/lease.fsm), stepped by internal/leasestep, the one implementation
// of what a lease policy's outputs do: which repository call comes next
// and with what, the facts of a loaded record (free or a tombstone, its
// holder dead on proof, TTL elapsed on this manager's clock since it first
// saw that revision, still this handle's generation), what each answer
// fires and where the deadline starts. worldmodel's lease world runs the
// same step, so that what is model-checked is what ships; a custom policy
// of the lease family can be passed in Config.Policy.
//
// The manager does its I/O at the edges: it steps a handle under its lock
// and makes the repository call the step asked for, judges a record's
// holder, and reports events (to Config.Logger and Config.OnEvent), with
// the lock let go. Its timers are one loop: a heap of the handles'
// deadlines and one of their renewals, as etcd's lessor keeps them, and
// the waits of AcquireWait and the time bounds of its own calls; the loop
// fires every deadline that has come before it starts the renewals due,
// hands the batch to a saver goroutine and the events to a reporter, and
// never waits for the store or runs user code, so that no slow store, log
// handler or OnEvent delays a declaration of loss. A manager runs three
// goroutines, however many leases it holds; Close ends them.
//
// Acquire takes a free key at once. A holder on this process table whose
// process is gone (or whose pid now belongs to another process) is taken
// over at once; a live holder that stopped renewing, or one in another
// process table (another host, boot or pid namespace), after the TTL,
// measured on the observer's own monotonic clock from the moment it first
// saw the holder's current record. Otherwise Acquire returns a
// *[HeldError] naming the holder, which matches [ErrHeld]. Every
// acquisition writes the next generation, one above the record's,
// tombstones included. A nil Config.Platform is platform.OS(), as a nil
// platform is the operating system throughout collab; the manager uses
// it for the process identity and the clock only.
//
// The holder renews every Heartbeat; all the leases of one manager renew
// together when the first of them falls due (the others at most a
// heartbeat early), in one transaction where the repository is a
// [store.BatchSaver]. Each write of a batch is answered on its own, as a
// store may save some and refuse others: a conflict on one key is the
// loss of that lease alone (the lease world model-checks batches of two,
// with every mix of answers). A failed renewal is retried every quarter
// heartbeat. The holder declares the lease lost
// when no renewal has succeeded within TTL of the start of its last
// successful write, which is before any observer may take over, since
// observers count the TTL from when they first saw that write; a revision
// conflict (another writer moved the record) is loss at once. Loss closes
// Lost(), makes Err() return a [*LossError], which matches [ErrLost] and
// says why (the deadline, after how many failed renewals and the last
// error; the record moved, to which holder; broken, by whom and when),
// reports it in the Lost event, and cancels fenced work with it as the
// cause. On a renewal's conflict the manager reads the record once, within
// the deadline, to name who moved it.
//
// Close re-reads the record and writes a tombstone keeping this generation
// only if the record still holds it, so it never erases a successor; the
// next acquisition gets a larger generation. It is bounded by a TTL on the
// manager's clock. Manager.Close releases every lease at once, so that a
// store that does not answer holds it about one TTL in all. After Close, Lost() is closed
// and Err() returns [ErrReleased] (an error that also matches [ErrClosed]
// when Manager.Close released it), or the [*LossError] when the lease was
// lost first. Once Manager.Close has begun, Acquire
// returns [ErrClosed].
//
// RunFenced holds the repository's per-key fence and re-reads the record
// before the work starts; waiting for the fence stops when the lease is
// lost, and the work's context is cancelled with cause ErrLost on loss.
// The fence is released when the work returns, so a successor's fenced
// work starts after that. A repository whose fence can be lost while
// held ([store.FenceWatcher]: an advisory lock ends with its database
// session) has the work cancelled with cause [ErrFenceLost] when that
// happens.
//
// The gap: between the holder's deadline and an observer's takeover lies
// only the duration of the holder's last write; a holder paused past its
// deadline (SIGSTOP, a long GC pause, a suspended machine) may still run
// for the moment it takes to notice, which is why fenced work re-reads
// the record under the fence, and why a resource that can compare should
// keep the highest token it has seen.
//
// The caller's duties:
//
//  1. Close every lease, and the Manager, when done; a lost lease too.
//  2. Fenced work returns soon after its context is cancelled, and writes
//     nothing after that: Go cannot stop a goroutine.
//  3. Shutdown of the work that a lease guards takes less than
//     TTL − Heartbeat × 2, so that it ends before a successor may start.
//  4. Every process sharing a repository uses one TTL, or the observers'
//     longer one: an observer waits the longer of its own TTL and the one
//     in the record.
//
// # Repositories
//
// The manager keeps its records in a [store.Repository]: one record per
// key, written only over the revision the writer read, and never
// deleted (a released lease stays as a tombstone, so that the next
// generation is still larger). Package store states the whole contract,
// for those who write a repository, and lease/leasetest checks it. The
// manager passes the repository's errors on: storage failures are
// *store.RepositoryError, and a record that cannot be read fails its key
// only, matching store.ErrCorruptRecord. The repositories of this module:
//
//   - lease/sqlite: a SQLite database that the processes of one host
//     share; the command line's default.
//   - lease/file: one JSON file per key, for hosts without SQLite.
//   - lease/postgres: a PostgreSQL database, for holders on several hosts.
//   - [MemoryRepository], in this package: one process.
//
// [NewMemoryRepository] keeps records in a map under one mutex, and serves
// one process. Its fence is a per-key lock whose waiters wait on a
// channel the holder closes on unlock, or on their context; the key's map
// entry exists only while the fence is held. It implements
// store.BatchSaver, a batch being applied under the mutex at once, and
// store.Lister.
//
// # Contract monitor
//
// Built with the tag collabmonitor (make test and the campaign's workers
// are), every step of every handle is checked against the duties the
// manager owes the lease policy and the lease world (monitor.go and
// monitor_edge.go): the order of triggers, one repository call at a time,
// each result fired as the repository answered it, facts true of the
// record read (recordOurs by generation, holderDead only as the platform
// judges, ttlElapsed on the monotonic clock since the first sighting of
// the revision), deadlines counted from no later than the start of their
// write, FenceTaken only under the fence, the repository's own
// compare-and-swap against every revision this process saw, and a loss
// whose cause is what the step shows (a deadline with the renewals that
// failed since the last success, a break only over a broken tombstone).
// A broken
// duty ends the process with the handle's recent steps. Without the tag
// the checks are constants the compiler drops, and a handle carries no
// monitor notes: they cost nothing.
//
// # Deterministic simulation
//
// The package's tests run whole managers in a deterministic simulation
// (sim_test.go): four processes, each a manager on a clock of its own,
// one of them on another process table (judged by the TTL alone),
// over one repository whose every call waits until a seed chooses to
// answer it (as asked, failed, failed after it was applied, or applied
// with its answer held back while time passes); the seed also chooses
// when time passes, which process pauses, resumes, crashes or restarts,
// and what the callers do. Between two choices the simulation waits until
// every goroutine of every manager waits for it, so a seed replays. It
// checks on every write and every start of fenced work that a key's
// generation never goes back nor repeats, that a successor takes a key
// over only after its holder declared the lease lost (unless the holder
// paused or crashed), that a renewal answered with a revision conflict
// ends its lease, and that fenced work starts only under the current
// generation and never beside fenced work of another. A failing seed is
// printed with its trace and the command that replays it.
package lease
