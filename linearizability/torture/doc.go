// Package torture runs multi-process campaigns against the lease and the
// process lock, and checks their histories for linearizability.
//
// A campaign (Run) starts Config.Workers worker processes: re-executions
// of a program that calls WorkerMain first thing (collab, or a test
// binary), told by the environment variable EnvWorker what to do. Each
// worker loops over random keys, doing one of:
//
//   - a lease round: it acquires the key's lease (refused, it sometimes
//     waits for it instead, Manager.AcquireWait, for up to three TTLs),
//     now and then a second key's too, so that its manager renews them
//     together; makes one to three fenced writes to a shared resource (a
//     SQLite table, or a JSON file a key for the file store) inside
//     Lease.RunFenced; sometimes reads it back under the key's fence; and
//     closes the leases;
//   - a process lock round: it takes the key's process lock (plock, on
//     SQLite, or as a lock file on the file store) without waiting, and
//     gives it back;
//   - a break of the key's lease without force (lease.Break), as an
//     operator would a stuck holder;
//   - a leader round: it campaigns for one election (lease/leader.Run)
//     for a few TTLs, each term's work a token-checked write (see
//     leaderRound);
//   - with Config.Collab, a command run under `collab lock`, which the
//     worker kills under it now and then, so that the guard alone keeps
//     the lock (see commandLockRound); or one run under `collab lease run
//     --wait` on the key's lease (see leaseRunRound).
//
// Every operation is recorded with linearizability.NewRecorder in the
// worker's own file of the run directory: a Close as Done (it does not
// say whether its tombstone was written), a failure that does not say
// whether the operation took effect as Unknown, never Refused. A wait
// that ends between attempts is Refused (its last attempt was); a break
// is recorded with the generation it broke and the holder's identity.
//
// With Config.PIDNamespaces, some workers run each in a pid namespace of
// its own, with its own /proc, as in a container: the others cannot
// judge their processes, nor they the others', so holders there are taken
// over after the TTL alone. A break or a takeover on proof of death is a
// judgement that linearizability cannot see (fencing refuses the ended
// holder's later writes either way): the check holds each against the
// kills recorded, by the identities the workers write in the run
// directory (see judged.go), and reports a holder ended alive, or proved
// dead across process tables, as a failure (Result.EndedAlive).
//
// The controller meanwhile SIGKILLs a random worker every KillEvery on
// average (recording the crash with BeginCrash before the signal and
// ending it after reaping), starts a new worker with a new process
// number in its place, and SIGSTOPs a random worker every PauseEvery for
// Pause to Pause × 2 (at least a TTL, so that its leases are taken over)
// before SIGCONT. Every random choice comes from Config.Seed, so a run
// can be replayed with its seed (the processes' timing still differs).
// When Duration has passed and the Min targets are met, the workers are
// told to stop (their stdin closes), finish their operation and close
// what they hold. The controller then merges the files, checks them with
// a timeout (linearizability.Check), and writes porcupine's visualisation
// after a violation or on request. Every wait is bounded, the campaign
// by Config.Deadline, and every child is killed and reaped on every path.
//
// Negative controls pass lease specs mutated to be unsafe in
// Config.Policies. Each of the two unsafe mutations alone is masked in
// a real run by the safety layer the other removes: a takeover before
// the TTL is caught by the fenced write's re-read (the stale holder's
// writes are refused), and a fenced write without the re-read is only
// reached by a stale holder when a successor took over before the
// holder's deadline. Together they are reported as violations: a holder
// taken over writes after its successor's acquisition returned. The
// controller counts such stale writes in the history as it grows
// (Stats.StaleWrites), and a negative control runs until it has one
// (Config.MinStaleWrites), so that its violation does not depend on the
// workers meeting so in a given time.
//
// With a server to fault (Config.Server), the controller also stops the
// store's server and starts it again, or pauses it, at random moments. A
// holder the outage cuts off cannot renew and must declare its lease
// lost: the controller counts such holders as the files grow
// (Stats.CutOff), and a campaign that must show one runs until it has
// (Server.MinCutOff), since whether a stop finds a worker holding a
// lease depends on the workers' timing.
//
// # When a campaign fails
//
// A test's run directory is often a t.TempDir(), removed as the test
// ends, before anyone has read why its campaign failed. So a campaign
// that fails keeps its evidence: a violation, a check that could not
// decide, a holder ended alive (Result.Failed), or a run that ended in an
// error after its workers started (a worker that ended on its own, a
// missed target, a history that could not be read), but not one the
// caller's context ended. Run then copies the run directory (the history
// files, the events, the workers' logs, the stores) and the
// visualisation into a new directory of this user's alone, named
// collab-campaign-seed<N>-*, under Config.KeepDir, else under the
// directory $COLLAB_KEEP_DIR names (EnvKeepDir: a CI job points it at
// what it uploads), else under os.TempDir(). It copies, rather than
// moves, so that Dir still holds the run for a caller that reads it
// afterwards; a campaign that passes copies nothing. Result.Kept names
// the copy, the summary prints it ("evidence kept in …", and the
// visualisation's path in it), and an error names it too (*KeptError).
// So a test that calls Run with a t.TempDir() and prints the summary
// when the campaign failed, as the README shows, leaves its evidence
// behind with no more code. A caller that keeps Dir itself, as collab
// demo does, sets Config.DirKept, and nothing is copied.
//
// The summary of a violation names the failing objects (the lease, the
// process lock or the fence of a key), the shortest failing history
// first, and says where porcupine's search stopped in it (lz.Stuck): how
// many operations it linearized, the last of them and the state they
// leave, and the operations none of which could come next, each with its
// process, input, output, and call and return times (relative to the
// printed history, and on the monotonic clock of the history files).
//
// It also counts the operations of unknown outcome by reason
// (Result.Unknown), since a check that must place many of them is slow
// and a run that makes many may be unsound: killed (its process was
// SIGKILLed during it, which leaves it open), paused (its worker was
// paused while it was under way, which the controller records in the
// events directory's pauses file; its lease or its context ran out
// meanwhile as a rule), and the reasons the workers record with the
// outcome (lz.Output.Reason): timeout (its context's deadline passed),
// lease lost (the lease ended under fenced work that had begun), store
// error (the store, the resource or the lock failed otherwise),
// unreported (lease/leader.Run does not say whether a campaign it ended
// had acquired, nor whether a term's lease was let go), command failed
// (a collab command ended without saying). For example:
//
//	unknown outcomes: 75 (killed 60, timeout 10, store error 5)
//
// A repository of the caller's runs the same campaign: Register names
// an Opener of it and of a Resource for its fenced writes, in the program
// whose re-executions are the workers, before WorkerMain; Config.Store
// then names it.
//
// RunLanes runs a campaign of package lanes in this process: goroutines
// wake and cancel keys of one set of lanes after another, each closed
// under them, with activations that succeed, fail, panic, outlive the
// turn timeout or wait for their context; every event is recorded from
// inside the call it records, and the record is held against the
// promises of package lanes (see checkLanes).
//
// Campaigns need SIGSTOP and SIGCONT: on windows, Run returns an error.
package torture
