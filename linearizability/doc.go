// Package linearizability records real concurrent histories of the lease
// and the process lock, and checks them for linearizability with
// porcupine (github.com/anishathalye/porcupine).
//
// # Recording
//
// Every process of a run writes its operations to its own file through a
// Recorder: Begin writes the call line (process, sequence number, key,
// Kind, Input, the host's monotonic clock before the call), and
// (*Pending).End the return line (Output, the clock after the return).
// Each line is one Write of one JSON object:
//
//	{"ev":"call","p":3,"id":17,"at":81234567,"key":"task:1","kind":"write","in":{"token":4,"value":"x"}}
//	{"ev":"ret","p":3,"id":17,"at":81239012,"out":{"status":"ok"}}
//
// A process killed between operations loses nothing (the kernel holds
// what it wrote; lines are not fsynced, so a machine crash could lose
// some). One killed during an operation leaves its call line without a
// return: an open operation. A process that kills another records it
// with BeginCrash(victim) before the signal and End after reaping.
// ReadHistory merges the files of all processes into one History sorted
// by call; a final line torn by a crash is skipped (History.Torn), any
// other unusable line is a *LineError naming file and line. Event has a
// stable JSON form of its own, for tools that store merged histories.
//
// # Models
//
// Check partitions the history by object, the lease and the lock of
// each key apart (a crash without a key joins every lock), and checks
// the objects in parallel with a timeout. Each object's history is cut
// into segments where no operation spans the cut, and the segments are
// checked one after another, each from every state the one before can
// leave (see chain in segment.go): porcupine's memory and time grow with
// the square of the history it is given, so an hour's campaign checks as
// sixty minutes' would, not as one long history, as long as outcomes that
// are known keep narrowing the possible states. (k acquisitions of
// unknown outcome in a row on one key, with no known one between them,
// leave k + 1 possible generations, and cost about k² steps however the
// history is cut.) Every object is checked to its end or its first
// failing segment (Report.Failing).
//
// The lease of a key is a record (generation, held or released) and the
// last accepted fenced write, initially generation 0, released, "":
//
//   - Acquire OK with Output.Gen g: g is the generation plus one; the
//     record becomes held. An acquisition is allowed whatever the state,
//     since a silent or dead holder may be taken over (the model cannot
//     see liveness or time). Acquire Refused: only while the record is held.
//   - Write OK with Input.Token t: the record holds generation t and is not
//     released; the value becomes Input.Value. Write Refused: always
//     allowed, and changes nothing.
//   - Read OK: Output.Value is the last accepted write.
//   - Release OK (a tombstone was written): the record held Input.Token;
//     it becomes released. Release Refused: the record did not hold it.
//     Release Done (what Lease.Close reports): released if it held it,
//     else nothing.
//   - Break OK with Output.Gen g (lease.Break wrote its tombstone over
//     the holder of g): the record held g; it becomes generation g + 1,
//     released. Break Refused: always allowed, and changes nothing (a
//     break refuses a holder that may still run, which the model cannot
//     see, as well as a free key).
//
// The lock of a key is its holder or free: Lock OK needs it free and
// makes the process its holder; Lock Refused needs it held; Unlock OK
// needs the process to hold it, and frees it; Crash frees it if the
// crashed process held it.
//
// # Operations of unknown outcome
//
// An operation is uncertain when it is open (crashed) or returned with
// status Unknown (a failure that does not say whether it took effect).
// It is given to porcupine with Return math.MaxInt64, and its Step
// accepts it in every state: it takes the effect a success would have
// where that is possible (for Acquire always, for Write and Release when
// the record holds the token, for Lock when free, for Unlock when held by
// its process), and otherwise changes nothing. Since it ends after every
// other operation, porcupine may linearize it at any moment after its
// call, where it takes effect, or last, where its effect matters to no
// one: so both outcomes are accepted, and an effect before its call is
// not. Status Done is stepped the same way but keeps its real return.
//
// porcupine's search is exponential in the operations pending together,
// and such an operation is pending to the end of its object's history.
// Check therefore gives porcupine an equivalent history, with the same
// verdict: a read of unknown outcome, which changes nothing and returns
// nothing, is left out; a fenced write or release of unknown outcome
// with token t ends at the first return of a known outcome that proves
// the record moved past generation t (an acquisition of a larger
// generation, an accepted write with a larger token, an accepted
// release with a token of t or more, a break of generation t or more),
// after which it could change nothing, or is left out if that return
// precedes its call; and the
// acquisitions of unknown outcome, which all have the same effect, are
// linearized in call order, so that k of them pending make k + 1 cases
// rather than 2^k. So the many failed acquisitions of a store that is
// down for a while cost the check little.
//
// # Diagnosis
//
// Report.ShortestFailing prints the shortest failing segment's history,
// with the states it was checked from, and Report.WriteHTML writes
// porcupine's visualisation: of that segment after a violation, of every
// segment otherwise, each from start states that lead on to the end of
// its object. After a violation, Check checks that segment again,
// verbosely, and reports in Report.Stuck where porcupine's search
// stopped: the longest linearized prefix it found, its last operation,
// the states it leaves, and the operations none of which could come next
// (those called before the first of them returned), each with its
// process, input, output, call and return. A long segment's reader starts
// there.
//
// An operation that returned Unknown may carry its recorder's reason in
// Output.Reason ("timeout", "store error"), which the printed histories
// show and the check ignores.
//
// Check never runs without a timeout (porcupine is exponential in the
// worst case, and unpartitioned histories grow quadratically in memory).
// A generated history of 100,000 operations over 100 keys and 16
// processes checks in about 0.2 s; one over 3 keys, as the demo runs, in
// about 8 µs an operation at 100,000 operations and at 400,000 alike
// (BenchmarkCheckHistory).
//
// The package torture runs real worker processes against the lease and
// lock runtimes under SIGKILL and SIGSTOP, records them with this
// package and checks the merged history: `collab demo` and the CI
// campaign.
package linearizability
