package worldmodel

import (
	"fmt"
	"strconv"

	"github.com/rivus/collab/internal/leasestep"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// The lease runtime as the lease world defines it, which LeaseModel checks
// any lease policy against. The world runs the runtime's own step,
// internal/leasestep, which package lease runs too: which call comes next
// and with what write, the facts of a record, what an answer fires, where
// the deadline starts, and the checks of what a policy may ask where. The
// world gives the step its revisions as none, stale or current (every
// write makes every other revision anyone notes stale), its instants as
// now or an earlier move, and a loaded record's holder judged as the
// platform judges: Dead on proof on the observer's process table, Alive
// there, Remote on another. So a bug in the step is a violation here.
//
// One key, or two. Each holder is a process (a lease manager) with at most
// one lease handle on the key at a time; the handle keeps the policy's
// StateID and the bookkeeping its outputs maintain, and the manager acts
// on it only by firing a trigger through Policy.Step with facts computed at
// that moment, then carrying out the outputs in the family's order; it
// never looks at state names. The repository keeps one record a key
// (generation, revision, holder, released) and compares revisions on
// every save; the per-key fence is a mutex of the repository that the
// kernel drops when its holder's process dies. With LeaseBounds.SecondKey
// one more holder, h0/b, is the first process's handle on a second key:
// it shares that process's crashes and process table, and its manager's
// renewals. A manager writes one batch of renewals at a time (a renewal
// that falls due meanwhile waits); when both of h0's handles have their
// renewal armed, RenewDue may fire at both at once, through the runtime's
// own leasestep.CollectDue, and their writes are answered together: the
// store applies them in key order, each saved or refused by its own
// revision, failed, or failed yet applied, and leasestep.AnswerBatch
// answers each. Everything else is per key: revisions, sightings, TTL
// windows, fences and the invariants.
//
// Calls (moves of the callers):
//   - Acquire: a new handle in the policy's initial state gets Acquire. The
//     call returns with acquired (the handle), heldError or repoError.
//   - Close: once per returned handle, and only while none of its
//     repository calls is in flight (the manager waits for the result
//     first); it fires Release and returns with endHandle. A second Close
//     returns the first one's result without firing anything.
//   - RunFenced: one call at a time per returned handle. It waits for the
//     fence (if another process holds it); holding it, the manager
//     re-reads the record and fires FenceTaken, whose step must answer
//     with exactly one of runFenced (the work starts; the fence is kept
//     until it returns) and refuseFenced (the fence is let go; RunFenced
//     returns ErrLost). After declareLost or endHandle the wait may stop
//     without the fence (RunFenced returns ErrLost), or win the fence
//     first, so that FenceTaken reaches a lost or ended handle.
//
// Facts come only with a record, as the step computes them: an
// acquisition's Loaded carries recordFree, holderDead and ttlElapsed, a
// returned handle's Loaded and FenceTaken recordOurs, every other trigger
// none. recordFree: no record, or a tombstone. holderDead: not free, and
// the platform judges the holder dead. ttlElapsed: TTL has passed on this
// manager's clock since its note of the record's revision; the step keeps
// the note (the first acquisition's load that returned that revision;
// kept across handles, forgotten once the key is free or claimed), and
// the world keeps, beside it, the truth of when this manager's
// acquisitions first saw the current revision (the flags seen and ttl),
// so that a step that notes wrongly is caught: an acquisition that finds
// the key free, its holder dead or silent for TTL by that truth must
// claim. recordOurs: not free, with the handle's token as its generation,
// and the handle was returned to its caller.
//
// Repository calls, at most one in flight per handle: load; claim, which
// writes generation (loaded generation + 1) over the revision just loaded
// and may be asked for only by the step handling an acquisition's Loaded;
// renew, which writes the token over the last revision this handle wrote;
// and tombstone, which writes the token as released over the revision just
// loaded and may be asked for only by the step handling a returned
// handle's Loaded. A save over a revision that is no longer current fires
// Conflict and changes nothing; any call may fail (RepoFailed); a failed
// write may have been applied all the same. The result of a call is one
// move: a write is applied when its result is delivered, which loses no
// behaviour, since only the writer reacts to the result.
//
// The other outputs: stopTimers stops the renewal and deadline timers;
// armDeadline arms the deadline at the start of the write whose Saved is
// being handled (in any other step, at an unknown earlier moment);
// scheduleRenew and scheduleRetry arm the renewal timer; declareLost closes
// Lost() and stops the timers; acquired returns the handle (only on the
// Saved of its claim); heldError and repoError end a pending Acquire, and
// repoError also answers a pending Close; endHandle ends a returned handle
// (its fenced work goes on until it returns). A timer event that arrives
// after its timer was stopped or fired is dropped by the manager (timers
// carry a sequence number), so RenewDue and DeadlinePassed fire only while
// their timer is armed, and each at most once per arming.
//
// Every trigger is fired only when the runtime can fire it: Acquire on a
// new handle, a result only for the call in flight, a timer only while
// armed, FenceTaken only for a RunFenced call holding the fence, Release
// once with no call in flight. So a rejection is always a manager bug, and
// a violation (leaseInvRejected); no rejection maps to an error a caller
// sees. A handle that ends or is dropped with a repository call in flight,
// a FenceTaken step that does not answer its call, and any other output
// the runtime cannot carry out where it comes are policy bugs too
// (leaseInvOutputs).
//
// Faults: a process may crash: its handle vanishes, its fence and fenced
// work go with it, and the record stays, naming it. A process may pause:
// it does nothing meanwhile, which every interleaving already allows, and
// its clock may stop, which the model allows explicitly: the holder's
// deadline then lags the others' clocks (lag below).
//
// Time. No clock is modelled; flags say which TTL windows have passed.
// due (per holder): TTL has passed since the start of its last successful
// write, the start of its deadline. ttl (per observer): TTL has passed
// since its manager first saw the current revision. lag (per holder): its
// process paused since its deadline started, so its clock may be behind.
// late (per holder): the step armed its deadline from the moment it
// handled the write's answer, after the write was visible to others, so
// no observer's TTL tells that it has passed, and a takeover before it is
// not excused as a lag is. The order real time imposes: every successful write ends before the
// current revision's write starts (that one is over a revision that
// existed when it was issued), so every holder's deadline starts no later
// than the current revision's write, which ends before any observer sees
// it. With clocks at one rate, when an observer's TTL has passed since it
// first saw the revision, every holder's deadline has passed too, unless
// the holder's clock lagged. So a load may return with ttl newly set (the
// observer saw the revision at an earlier load), and then every armed,
// unlagged holder becomes due. A new revision clears every ttl, and a
// holder's deadline restarts only with a new revision, so due stays true
// while it matters. DeadlinePassed may fire at any time while the deadline
// is armed: renewals can always be late, so the deadline can always pass;
// due serves only to judge a takeover (leaseInvEarly).
//
// Moves that change nothing another holder can tell from a delay are left
// out, so that the model explores fewer worlds without losing behaviours:
// a RunFenced call that finds the fence free takes it at once; a process
// crashes only while the record names it as live holder or it holds the
// fence (otherwise a crash looks like a process that never moves again);
// and a pause is only its effect on the clock.
//
// Invariants (leaseInv...): a trigger is never rejected; outputs are ones
// the runtime can carry out; the record's generation never decreases, and
// a claim never writes a generation an earlier claim wrote; fenced work of
// different generations never runs at once; fenced work starts only while
// the record holds the handle's token, and never after the handle declared
// itself lost; a claim never replaces a holder that still holds the lease
// before its deadline (package lease's renewal rule: the holder declares
// itself lost before any observer may take over), unless its clock lagged; an acquisition
// that finds the key free, its holder proven dead, or its revision silent
// for TTL (on this process table, or on another) claims it, each a
// guarantee that a policy may waive (Table.Waived), whose refusals the
// world then lets pass; and a handle that gets DeadlinePassed, or Conflict
// on a renewal, while it holds declares itself lost: the conflict proves
// the record moved past the holder's last write, and a holder that kept
// renewing over it would learn of a takeover only at its deadline. The properties of a single move are judged in Next
// and recorded in the world's fault fields, which the invariants read.

// LeaseMaxHolders is the most holders a lease world holds: its arrays have
// this length.
const LeaseMaxHolders = 4

// leaseMaxGeneration is the highest generation a packed world holds (four
// bits). Acquisitions start only below LeaseBounds.Generations, and each
// of the others' acquisitions under way then adds at most one, so a
// generation never exceeds Generations + Holders - 1.
const leaseMaxGeneration = 15

// leaseMaxStates is the most states a policy may have for a packed world
// (five bits).
const leaseMaxStates = 32

// LeaseBounds bound the lease runtime that LeaseModel explores.
type LeaseBounds struct {
	// Holders is the number of processes that take the lease, 1 to
	// LeaseMaxHolders; each has at most one handle at a time.
	Holders int
	// Remote is how many of them (the last ones) share no process table
	// with the others, so that only the TTL tells them dead: 0 to Holders.
	Remote int
	// Generations bounds acquisition: Acquire is called only while the
	// record's generation is below it, 1 to 16 - Holders.
	Generations int
	// Failures lets every repository call fail.
	Failures bool
	// Ambiguous lets a failed write be applied all the same.
	Ambiguous bool
	// Pauses lets a holder's process pause with its clock stopped, so
	// that its deadline lags.
	Pauses bool
	// Crashes lets processes crash.
	Crashes bool
	// SecondKey gives the first holder's process a second handle, on a
	// second key, as one more holder after the others (named h0/b), so
	// that its manager renews both in one batch and a batch's writes can
	// meet different answers. Holders is then at most LeaseMaxHolders-1.
	// The other holders take the first key only: the second's conflicts
	// come from its own writes that failed yet applied.
	SecondKey bool
}

// DefaultLeaseBounds returns the bounds the tests check the shipped policy
// at: three holders, one of them on another process table, two
// generations, and every fault.
func DefaultLeaseBounds() LeaseBounds {
	return LeaseBounds{Holders: 3, Remote: 1, Generations: 2, Failures: true, Ambiguous: true, Pauses: true, Crashes: true}
}

// BatchLeaseBounds returns the bounds at which batched renewals are
// checked beside DefaultLeaseBounds: two holders, the second on another
// process table, the first holding a second key too, one generation a
// key, and every fault. A batch's write meets a conflict there when an
// earlier write of its handle failed yet applied; LargerLeaseBounds adds a
// second generation, and with it takeovers.
func BatchLeaseBounds() LeaseBounds {
	b := DefaultLeaseBounds()
	b.Holders, b.Generations, b.SecondKey = 2, 1, true
	return b
}

// LeaseWorld is one state of up to LeaseMaxHolders lease holders on one
// key: each holder's handle, process and observer bookkeeping, the
// repository's record and fence, ghost variables for the invariants and,
// in a world that breaks one, what the move that led to it did wrong. It
// is a comparable value of four words, the variables of leaseVars packed
// by a key function (lease_world_words.go), because the checker's visited
// set is what bounds its speed and a smaller key is a faster one; moves
// and invariants read leaseVars' plain fields, and the model's Format
// renders it.
type LeaseWorld struct {
	w [4]uint64
}

// leaseVars is a LeaseWorld unpacked: the model computes on it.
type leaseVars struct {
	h   [LeaseMaxHolders]leaseHolder
	rec [leaseMaxKeys]leaseRecord // per key: the repository's record and fence
	// fault, faultAt (holder+1) and faultArg record the first thing a move
	// did wrong; fault 0 means nothing.
	fault    leaseFault
	faultAt  uint8
	faultArg uint8
	// others says the move changed holders other than the one that moved,
	// which repacking then has to include.
	others bool
}

// leaseMaxKeys is the most keys a lease world holds.
const leaseMaxKeys = 2

// leaseRecord is one key's record in the repository, its fence, and a
// ghost of its claims.
type leaseRecord struct {
	gen   uint8 // the record's generation
	by    uint8 // holder+1 of the handle that wrote the record; 0: no record
	free  uint8 // 1: the record is a tombstone
	fence uint8 // holder+1 of the handle holding the fence; 0: free
	// top is a ghost: the highest generation any claim wrote.
	top uint8
}

// leaseHolder is one process's handle on one key, and its manager's
// notes of that key. A field
// that no longer matters is reset, so that worlds that differ only in it
// are one world.
type leaseHolder struct {
	// hs is the handle's bookkeeping, which the runtime's own step
	// (internal/leasestep) reads and changes. Its revisions are
	// leaseRev... values, its instants leaseMoment... values; its Read is
	// kept only within a move.
	hs    leasestep.Handle[uint8]
	fcall uint8 // its RunFenced call (leaseFence...)
	// note is the revision its manager's sighting notes (leaseRev...),
	// the step's bookkeeping; the ghost flags leaseSeen and leaseTTL say
	// what is true of the current revision.
	note  uint8
	flags leaseFlags
}

// Revisions as the world gives them to the step: only whether one is the
// record's current revision matters, so every other is stale.
const (
	leaseRevNone    uint8 = iota // no record
	leaseRevStale                // a revision the record has moved past
	leaseRevCurrent              // the record's revision
)

// Instants as the world gives them to the step: now, during the move, or
// some earlier move.
const (
	leaseMomentPast uint8 = iota + 1
	leaseMomentNow
)

// The handle's RunFenced call.
const (
	leaseFenceIdle    uint8 = iota // no call
	leaseFenceWaiting              // the call waits for the fence
	leaseFenceWorking              // the fenced work runs under the fence with the token
	leaseFenceTaken                // the call holds the fence; FenceTaken is being handled (within a move only)
)

type leaseFlags uint16

const (
	leaseRenew     leaseFlags = 1 << iota // the renewal timer is armed
	leaseArmed                            // the deadline timer is armed
	leaseDue                              // TTL has passed since the deadline's start
	leaseLag                              // its clock stopped since the deadline's start
	leaseLate                             // the deadline started after its write was visible
	leaseNoteTTL                          // TTL has passed since its manager's note
	leaseSeen                             // ghost: its manager's acquisitions have seen the current revision
	leaseTTL                              // ghost: TTL has passed since they first saw it
	leaseCrashed                          // the process is gone
	leaseBatched                          // its renewal in flight is one of a batch of its manager's
	leaseFlagCount = iota
)

// leaseTimerBits are the flags that stopping the timers clears.
const leaseTimerBits = leaseArmed | leaseDue | leaseLag | leaseLate | leaseRenew

// leaseFault names what a move did wrong; each has its invariant.
type leaseFault uint8

const (
	leaseFaultNone      leaseFault = iota
	leaseFaultRejected             // a trigger was rejected
	leaseFaultOutputs              // an output the runtime cannot carry out
	leaseFaultGenBack              // a write lowered the generation
	leaseFaultGenRepeat            // a claim reused a generation
	leaseFaultStale                // fenced work started without the current generation
	leaseFaultLostWork             // a lost handle started fenced work
	leaseFaultEarly                // a live holder was taken over before its deadline
	leaseFaultRefused              // an acquisition gave up an abandoned key
	leaseFaultDeadline             // DeadlinePassed left the handle holding
	leaseFaultConflict             // a renewal's Conflict left the handle holding
	leaseFaultCount
)

// Invariant names of the lease world.
const (
	leaseInvRejected = "no rejected trigger"
	leaseInvOutputs  = "outputs the runtime can carry out"
	leaseInvGenBack  = "generation never decreases"
	leaseInvRepeat   = "generation never repeats"
	leaseInvStale    = "fenced work starts with the current generation"
	leaseInvLostWork = "lost holder starts no fenced work"
	leaseInvOverlap  = "fenced sections never overlap"
	leaseInvEarly    = "no takeover before the holder's deadline"
	// The guarantees a policy may waive: an acquisition that finds the
	// key in one of these cases claims it.
	leaseInvFree         = "free key acquirable"
	leaseInvDead         = "key of a dead holder acquirable"
	leaseInvSilentLocal  = "key of a silent holder on this process table acquirable"
	leaseInvSilentRemote = "key of a silent holder on another process table acquirable"
	leaseInvDeadline     = "holder declares loss at its deadline"
	leaseInvConflict     = "holder declares loss on a renewal's conflict"
)

var leaseFaultNames = [leaseFaultCount]string{
	leaseFaultRejected:  leaseInvRejected,
	leaseFaultOutputs:   leaseInvOutputs,
	leaseFaultGenBack:   leaseInvGenBack,
	leaseFaultGenRepeat: leaseInvRepeat,
	leaseFaultStale:     leaseInvStale,
	leaseFaultLostWork:  leaseInvLostWork,
	leaseFaultEarly:     leaseInvEarly,
	leaseFaultRefused:   "", // one invariant per guarantee (refusals)
	leaseFaultDeadline:  leaseInvDeadline,
	leaseFaultConflict:  leaseInvConflict,
}

// faultArg values of leaseFaultOutputs beyond the output bits.
const (
	leaseArgNoAnswer = 64 + iota // FenceTaken answered neither or both ways
	leaseArgCallLeft             // the handle ended with a call in flight
	leaseArgBadState             // the step named no state of the policy
)

// leaseMove is a move of one holder: a call, a timer, a repository result,
// or a fault of its process.
type leaseMove uint8

const (
	leaseMvAcquire leaseMove = iota
	leaseMvClose
	leaseMvRunFenced
	leaseMvFenceTaken
	leaseMvWaitEnds
	leaseMvWorkReturns
	leaseMvRenewDue
	leaseMvDeadlinePassed
	leaseMvLoaded
	leaseMvLoadedTTL
	leaseMvSaved
	leaseMvConflict
	leaseMvFailed
	leaseMvFailedApplied
	leaseMvLag
	leaseMvCrash
	leaseMvRenewDueBatch
	// leaseMvBatch+4a+b answers a batch of two renewals: the first write
	// with outcome a, the second with b (leaseOut...).
	leaseMvBatch
	leaseMoveCount = leaseMvBatch + leaseOutcomes*leaseOutcomes
)

// The outcomes of one write of a batch.
const (
	leaseOutSaved         = iota // over the current revision, saved
	leaseOutConflict             // over a stale revision, refused
	leaseOutFailed               // failed
	leaseOutFailedApplied        // failed, yet applied
	leaseOutcomes
)

var leaseOutcomeNames = [leaseOutcomes]string{"Saved", "Conflict", "RepoFailed", "RepoFailed after the write applied"}

var leaseMoveNames = [leaseMoveCount]string{
	leaseMvAcquire:        "Acquire",
	leaseMvClose:          "Close (Release)",
	leaseMvRunFenced:      "RunFenced",
	leaseMvFenceTaken:     "FenceTaken after waiting",
	leaseMvWaitEnds:       "RunFenced stops waiting (ErrLost)",
	leaseMvWorkReturns:    "fenced work returns",
	leaseMvRenewDue:       "RenewDue",
	leaseMvDeadlinePassed: "DeadlinePassed",
	leaseMvLoaded:         "Loaded",
	leaseMvLoadedTTL:      "Loaded, TTL passed since its manager first saw the revision, unwritten since",
	leaseMvSaved:          "Saved",
	leaseMvConflict:       "Conflict",
	leaseMvFailed:         "RepoFailed",
	leaseMvFailedApplied:  "RepoFailed after the write applied",
	leaseMvLag:            "process pauses with its clock stopped (its deadline lags)",
	leaseMvCrash:          "process crashes",
	leaseMvRenewDueBatch:  "RenewDue, with its manager's other key due in the same batch",
}

// leaseModel is LeaseModel's closure state: the policy, the bounds and the
// labels, built once so that Next does not allocate.
type leaseModel struct {
	p      policy.Policy
	states []policy.Word
	b      LeaseBounds
	n      int            // holders: Holders, and h0/b with SecondKey
	local  int            // processes 0..local-1 share one process table; the rest another
	init   policy.StateID // the policy's initial state
	// proc and key are each holder's process and key; second is the
	// holder of the second key (h0/b), or -1.
	proc, key [LeaseMaxHolders]uint8
	second    int
	// sorted has bit i set when holders i-1 and i are interchangeable, of
	// one process table and neither sharing its process with another.
	sorted uint8
	labels [LeaseMaxHolders][leaseMoveCount]string
	// scratch is the world a move is applied to: one per search worker
	// (fork), reused by every move.
	scratch *leaseVars
}

// LeaseModel returns the lease world of p within b: b.Holders processes
// that acquire, renew, fence, release and fail on one key, with the
// invariants of the lease family. p must be a policy of family lease.
func LeaseModel(p policy.Policy, b LeaseBounds) (modelcheck.Model[LeaseWorld], error) {
	m, err := newLeaseModel(p, b)
	if err != nil {
		return modelcheck.Model[LeaseWorld]{}, err
	}
	var v leaseVars
	for i := range v.h {
		v.h[i].hs.State = m.init
	}
	return modelcheck.Model[LeaseWorld]{
		Name:       leaseWorldName(p, b),
		Init:       []LeaseWorld{v.pack()},
		Next:       m.next,
		Fork:       m.fork,
		Invariants: m.invariants(),
		Owes:       m.owes,
		Canonical:  m.canonical,
		Format:     m.format,
	}, nil
}

// leaseWorldName names the lease world of p within b.
func leaseWorldName(p policy.Policy, b LeaseBounds) string {
	second := ""
	if b.SecondKey {
		second = ", h0 on a second key"
	}
	return fmt.Sprintf("lease world of %s (%d holders, %d remote, %d generations%s)", p.Name(), b.Holders, b.Remote, b.Generations, second)
}

func newLeaseModel(p policy.Policy, b LeaseBounds) (*leaseModel, error) {
	if err := checkLeasePolicy(p); err != nil {
		return nil, err
	}
	switch {
	case b.Holders < 1 || b.Holders > LeaseMaxHolders:
		return nil, &ModelError{"lease", "Holders", fmt.Sprintf("%d, want 1 to %d", b.Holders, LeaseMaxHolders)}
	case b.Remote < 0 || b.Remote > b.Holders:
		return nil, &ModelError{"lease", "Remote", fmt.Sprintf("%d, want 0 to Holders (%d)", b.Remote, b.Holders)}
	case b.Generations < 1 || b.Generations+b.Holders-1 > leaseMaxGeneration:
		return nil, &ModelError{"lease", "Generations", fmt.Sprintf("%d, want 1 to %d with %d holders", b.Generations, leaseMaxGeneration+1-b.Holders, b.Holders)}
	case b.SecondKey && b.Holders > LeaseMaxHolders-1:
		return nil, &ModelError{"lease", "Holders", fmt.Sprintf("%d, want 1 to %d with SecondKey", b.Holders, LeaseMaxHolders-1)}
	}
	m := &leaseModel{p: p, states: p.Table().States, b: b, n: b.Holders, local: b.Holders - b.Remote, init: p.Initial(), second: -1, scratch: new(leaseVars)}
	for i := range b.Holders {
		m.proc[i] = uint8(i)
		if i > 0 && i != m.local && !(b.SecondKey && i == 1) {
			m.sorted |= 1 << i
		}
	}
	if b.SecondKey {
		m.second, m.key[m.n] = m.n, 1
		m.n++
	}
	for i := range m.labels {
		for mv, name := range leaseMoveNames {
			m.labels[i][mv] = m.holderName(i) + " " + name
		}
		for a := range leaseOutcomes {
			for b := range leaseOutcomes {
				m.labels[i][leaseMvBatch+leaseMove(a*leaseOutcomes+b)] = fmt.Sprintf("%s's batch answered: %s %s, %s %s",
					m.holderName(i), m.holderName(i), leaseOutcomeNames[a], m.holderName(m.second), leaseOutcomeNames[b])
			}
		}
	}
	return m, nil
}

// fork returns a Next for one more search worker, with its own scratch
// world.
func (m *leaseModel) fork() func(LeaseWorld, func(string, LeaseWorld)) {
	c := *m
	c.scratch = new(leaseVars)
	return c.next
}

// checkLeasePolicy requires a policy that speaks the lease family's
// vocabulary, whose IDs the world uses.
func checkLeasePolicy(p policy.Policy) error {
	if p == nil {
		return &ModelError{"lease", "Policy", "nil"}
	}
	if p.Family() != "lease" {
		return &ModelError{"lease", "Policy", fmt.Sprintf("%s is of family %q, not lease", p.Name(), p.Family())}
	}
	if err := checkTable("lease", p); err != nil {
		return err
	}
	t := p.Table()
	if len(t.States) > leaseMaxStates {
		return &ModelError{"lease", "Policy", fmt.Sprintf("%s has %d states; the lease world holds at most %d", p.Name(), len(t.States), leaseMaxStates)}
	}
	fam, _ := policy.LookupFamily("lease")
	if !sameLeaseWords(t.Triggers, fam.Triggers) || !sameLeaseWords(t.Facts, fam.Facts) || !sameLeaseWords(t.Outputs, fam.Outputs) {
		return &ModelError{"lease", "Policy", p.Name() + "'s vocabulary is not the lease family's"}
	}
	return nil
}

func sameLeaseWords(a, b []policy.Word) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

func leaseHolderName(i int) string { return "h" + strconv.Itoa(i) }

// holderName names holder i in traces: h0/b for the first process's
// handle on the second key.
func (m *leaseModel) holderName(i int) string {
	if i == m.second {
		return "h0/b"
	}
	return leaseHolderName(i)
}

// sameProcess reports whether holders i and k are handles of one process.
func (m *leaseModel) sameProcess(i, k int) bool { return m.proc[i] == m.proc[k] }

// recOf returns the record of holder i's key.
func (m *leaseModel) recOf(w *leaseVars, i int) *leaseRecord { return &w.rec[m.key[i]] }
