// Package torture runs multi-process campaigns against the lease and the
// process lock, and checks their histories for linearizability.
//
// A campaign (Run) starts Config.Workers worker processes: re-executions
// of a program that calls WorkerMain first thing (collab, or a test
// binary), told by the environment variable EnvWorker what to do. Each
// worker loops over random keys: it acquires the key's lease, makes one
// to three fenced writes to a shared resource (a SQLite table, or a JSON
// file a key for the file store) inside Lease.RunFenced, sometimes reads
// it back under the key's fence, and closes the lease; refused, it
// sometimes waits for the lease instead (Manager.AcquireWait, for up to
// three TTLs). Or it takes the key's process lock (plock) without
// waiting, and gives it back; or it breaks the key's lease without force
// (lease.Break), as an operator would a stuck holder. Every
// operation is recorded with linearizability.NewRecorder in the worker's
// own file of the run directory: a Close as Done (it does not say whether
// its tombstone was written), a failure that does not say whether the
// operation took effect as Unknown, never Refused. A wait that ends
// between attempts is Refused (its last attempt was); a break is
// recorded with the generation it broke and the holder's pid.
//
// A break without force must refuse a holder that may still run, and
// every holder of a campaign shares this process table: so the holder a
// break ended must have been sent its SIGKILL before the break returned.
// The check holds each break against the kills recorded (by the pids the
// workers write in the run directory), and reports any other as a
// failure (Result.LiveBreaks), which linearizability cannot see.
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
// A repository of the caller's runs the same campaign: Register names
// an Opener of it and of a Resource for its fenced writes, in the program
// whose re-executions are the workers, before WorkerMain; Config.Store
// then names it.
//
// Campaigns need SIGSTOP and SIGCONT: on windows, Run returns an error.
package torture
