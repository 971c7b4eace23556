package fsm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/policy"
)

// The lease runtime as the lease world defines it; package lease must
// implement exactly these semantics, which LeaseModel checks any lease
// policy against.
//
// One key. Each holder is a process (a lease manager) with at most one
// lease handle on the key at a time; the handle keeps the policy's StateID
// and the bookkeeping its outputs maintain, and the manager acts on it only
// by firing a trigger through Policy.Step with facts computed at that
// moment, then carrying out the outputs in the family's order; it never
// looks at state names. The repository keeps one record (generation,
// revision, holder, released) and compares revisions on every save; the
// per-key fence is a mutex of the repository that the kernel drops when
// its holder's process dies.
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
// Facts come only with a record: Loaded carries the facts of the record
// it read, FenceTaken those of the record re-read under the fence, every
// other trigger none. recordFree: no record, or a tombstone. holderDead:
// not free, and the record's holder shares this manager's process table
// and its process is gone. ttlElapsed: TTL has passed on this manager's
// monotonic clock since it first saw the record's current revision (a
// manager notes a revision the first time one of its loads returns it, and
// keeps the note across handles). recordOurs: not free, written by this
// process, with the handle's token as its generation, and the handle was
// returned to its caller.
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
// The order real time imposes: every successful write ends before the
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
// before its deadline (DESIGN.md: the holder declares itself lost before
// any observer may take over), unless its clock lagged; an acquisition
// that finds the key free, its holder proven dead, or its revision silent
// for TTL claims it; and a handle that gets DeadlinePassed while it holds
// declares itself lost. The properties of a single move are judged in Next
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
}

// DefaultLeaseBounds returns the bounds the tests check the shipped policy
// at: three holders, one of them on another process table, two
// generations, and every fault.
func DefaultLeaseBounds() LeaseBounds {
	return LeaseBounds{Holders: 3, Remote: 1, Generations: 2, Failures: true, Ambiguous: true, Pauses: true, Crashes: true}
}

// LeaseWorld is one state of up to LeaseMaxHolders lease holders on one
// key: each holder's handle, process and observer bookkeeping, the
// repository's record and fence, ghost variables for the invariants and,
// in a world that breaks one, what the move that led to it did wrong. It
// is a comparable value of 16 bytes, the variables of leaseVars packed
// into bit fields, because the checker's visited set is what bounds its
// speed and a smaller key is a faster one; the model's Format renders it.
type LeaseWorld struct {
	// h holds each holder's leaseHolder: st | op<<5, gen | lifeCall<<4,
	// and the flags lost, lfresh, wfresh, renew | clock<<4 (see
	// leaseHolder.pack).
	h     [LeaseMaxHolders][3]uint8
	rec   uint8 // recGen | recFree<<4 | recBy<<5
	fence uint8 // fence | fault<<3
	ghost uint8 // faultAt | top<<3
	arg   uint8 // faultArg
}

// leaseVars is a LeaseWorld unpacked: the model computes on it.
type leaseVars struct {
	h       [LeaseMaxHolders]leaseHolder
	recGen  uint8 // the record's generation
	recBy   uint8 // holder+1 of the process that wrote the record; 0: no record
	recFree uint8 // 1: the record is a tombstone
	fence   uint8 // holder+1 of the process holding the fence; 0: free
	// top is a ghost: the highest generation any claim wrote.
	top uint8
	// fault, faultAt (holder+1) and faultArg record the first thing a move
	// did wrong; fault 0 means nothing.
	fault    leaseFault
	faultAt  uint8
	faultArg uint8
	// others says the move changed holders other than the one that moved,
	// which repacking then has to include.
	others bool
}

// leaseHolder is one process, its manager's notes and its handle. A field
// that no longer matters is reset, so that worlds that differ only in it
// are one world.
type leaseHolder struct {
	st    uint8 // the handle's policy.StateID
	gen   uint8 // its claim's generation; once acquired, its token
	op    uint8 // the repository call in flight (leaseOp...)
	life  uint8 // the handle's life (leaseLife...)
	fcall uint8 // its RunFenced call (leaseFence...)
	flags leaseFlags
}

// The repository call in flight.
const (
	leaseOpNone uint8 = iota
	leaseOpLoad
	leaseOpClaim
	leaseOpRenew
	leaseOpTombstone
)

var leaseOpNames = [...]string{"", "load", "claim", "renew", "tombstone"}

// The handle's life as its caller sees it.
const (
	leaseLifeNone      uint8 = iota // no handle: the process may call Acquire
	leaseLifeAcquiring              // Acquire has not returned
	leaseLifeReturned               // Acquire returned the handle
	leaseLifeEnded                  // endHandle: kept only while a RunFenced call lingers
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
	leaseLostF   leaseFlags = 1 << iota // declareLost: Lost() is closed
	leaseLFresh                         // the revision it last loaded is current
	leaseWFresh                         // the revision it last wrote is current
	leaseRenew                          // the renewal timer is armed
	leaseArmed                          // the deadline timer is armed
	leaseDue                            // TTL has passed since the deadline's start
	leaseLag                            // its clock stopped since the deadline's start
	leaseSeen                           // its manager has seen the current revision
	leaseTTL                            // TTL has passed since it first saw it
	leaseClosed                         // Close was called (kept only while returned)
	leaseCrashed                        // the process is gone
)

// leaseTimerBits are the flags that stopping the timers clears.
const leaseTimerBits = leaseArmed | leaseDue | leaseLag | leaseRenew

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
	leaseInvRefused  = "crashed holder's key acquirable"
	leaseInvDeadline = "holder declares loss at its deadline"
)

var leaseFaultNames = [leaseFaultCount]string{
	leaseFaultRejected:  leaseInvRejected,
	leaseFaultOutputs:   leaseInvOutputs,
	leaseFaultGenBack:   leaseInvGenBack,
	leaseFaultGenRepeat: leaseInvRepeat,
	leaseFaultStale:     leaseInvStale,
	leaseFaultLostWork:  leaseInvLostWork,
	leaseFaultEarly:     leaseInvEarly,
	leaseFaultRefused:   leaseInvRefused,
	leaseFaultDeadline:  leaseInvDeadline,
}

// faultArg values of leaseFaultOutputs beyond the output bits.
const (
	leaseArgNoAnswer = 64 + iota // FenceTaken answered neither or both ways
	leaseArgCallLeft             // the handle ended with a call in flight
	leaseArgBadState             // the step named no state of the policy
)

// The family's vocabulary as the world uses it.
const (
	leaseTAcquire        = policy.TriggerID(LeaseAcquire)
	leaseTLoaded         = policy.TriggerID(LeaseLoaded)
	leaseTSaved          = policy.TriggerID(LeaseSaved)
	leaseTConflict       = policy.TriggerID(LeaseConflict)
	leaseTRepoFailed     = policy.TriggerID(LeaseRepoFailed)
	leaseTRenewDue       = policy.TriggerID(LeaseRenewDue)
	leaseTDeadlinePassed = policy.TriggerID(LeaseDeadlinePassed)
	leaseTFenceTaken     = policy.TriggerID(LeaseFenceTaken)
	leaseTRelease        = policy.TriggerID(LeaseRelease)

	leaseFFree = policy.Facts(LeaseFactRecordFree)
	leaseFDead = policy.Facts(LeaseFactHolderDead)
	leaseFTTL  = policy.Facts(LeaseFactTtlElapsed)
	leaseFOurs = policy.Facts(LeaseFactRecordOurs)

	leaseOStopTimers   = policy.Outputs(LeaseOutputStopTimers)
	leaseOLoad         = policy.Outputs(LeaseOutputLoad)
	leaseOClaim        = policy.Outputs(LeaseOutputClaim)
	leaseORenew        = policy.Outputs(LeaseOutputRenew)
	leaseOTombstone    = policy.Outputs(LeaseOutputTombstone)
	leaseOArmDeadline  = policy.Outputs(LeaseOutputArmDeadline)
	leaseOSchedule     = policy.Outputs(LeaseOutputScheduleRenew | LeaseOutputScheduleRetry)
	leaseODeclareLost  = policy.Outputs(LeaseOutputDeclareLost)
	leaseORunFenced    = policy.Outputs(LeaseOutputRunFenced)
	leaseORefuseFenced = policy.Outputs(LeaseOutputRefuseFenced)
	leaseOAcquired     = policy.Outputs(LeaseOutputAcquired)
	leaseOHeldError    = policy.Outputs(LeaseOutputHeldError)
	leaseORepoError    = policy.Outputs(LeaseOutputRepoError)
	leaseOEndHandle    = policy.Outputs(LeaseOutputEndHandle)

	leaseOCalls        = leaseOLoad | leaseOClaim | leaseORenew | leaseOTombstone
	leaseOFenceAnswers = leaseORunFenced | leaseORefuseFenced
	leaseOReturns      = leaseOAcquired | leaseOHeldError | leaseORepoError | leaseOEndHandle
	leaseTakeoverFacts = leaseFFree | leaseFDead | leaseFTTL
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
	leaseMoveCount
)

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
	leaseMvLoadedTTL:      "Loaded, TTL passed since its manager first saw the revision",
	leaseMvSaved:          "Saved",
	leaseMvConflict:       "Conflict",
	leaseMvFailed:         "RepoFailed",
	leaseMvFailedApplied:  "RepoFailed after the write applied",
	leaseMvLag:            "process pauses with its clock stopped (its deadline lags)",
	leaseMvCrash:          "process crashes",
}

// leaseModel is LeaseModel's closure state: the policy, the bounds and the
// labels, built once so that Next does not allocate.
type leaseModel struct {
	p      policy.Policy
	states []policy.Word
	b      LeaseBounds
	n      int
	local  int   // holders 0..local-1 share one process table; the rest another
	init   uint8 // the policy's initial state
	labels [LeaseMaxHolders][leaseMoveCount]string
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
		v.h[i].st = m.init
	}
	return modelcheck.Model[LeaseWorld]{
		Name:       fmt.Sprintf("lease world of %s (%d holders, %d remote, %d generations)", p.Name(), b.Holders, b.Remote, b.Generations),
		Init:       []LeaseWorld{v.pack()},
		Next:       m.next,
		Invariants: m.invariants(),
		Owes:       m.owes,
		Canonical:  m.canonical,
		Format:     m.format,
	}, nil
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
	}
	m := &leaseModel{p: p, states: p.Table().States, b: b, n: b.Holders, local: b.Holders - b.Remote, init: uint8(p.Initial())}
	for i := range m.labels {
		for mv, name := range leaseMoveNames {
			m.labels[i][mv] = leaseHolderName(i) + " " + name
		}
	}
	return m, nil
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
	t := p.Table()
	if t == nil || len(t.States) == 0 || int(p.Initial()) >= len(t.States) {
		return &ModelError{"lease", "Policy", p.Name() + " has no valid table of states"}
	}
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

// next yields every move of every holder, in holder order.
func (m *leaseModel) next(w LeaseWorld, yield func(string, LeaseWorld)) {
	if w.fault() != leaseFaultNone {
		return
	}
	v := w.unpack()
	for i := range m.n {
		if v.h[i].flags&leaseCrashed == 0 {
			m.holderMoves(&w, &v, i, yield)
		}
	}
}

// holderMoves yields the moves of live holder i that its callers, its
// timers, the repository and faults could make in w.
func (m *leaseModel) holderMoves(pw *LeaseWorld, w *leaseVars, i int, yield func(string, LeaseWorld)) {
	h := &w.h[i]
	life := h.life
	if life == leaseLifeNone && int(w.recGen) < m.b.Generations {
		m.emit(pw, w, i, leaseMvAcquire, yield)
	}
	if life == leaseLifeReturned && h.flags&leaseClosed == 0 && h.op == leaseOpNone {
		m.emit(pw, w, i, leaseMvClose, yield)
	}
	if h.fcall != leaseFenceIdle || life == leaseLifeReturned {
		m.fenceMoves(pw, w, i, yield)
	}
	if h.flags&leaseRenew != 0 {
		m.emit(pw, w, i, leaseMvRenewDue, yield)
	}
	if h.flags&leaseArmed != 0 {
		m.emit(pw, w, i, leaseMvDeadlinePassed, yield)
	}
	if h.op != leaseOpNone {
		m.resultMoves(pw, w, i, yield)
	}
	if m.b.Pauses && h.flags&(leaseArmed|leaseLag) == leaseArmed {
		m.emit(pw, w, i, leaseMvLag, yield)
	}
	if m.b.Crashes && m.crashMatters(w, i) {
		m.emit(pw, w, i, leaseMvCrash, yield)
	}
}

// crashMatters reports whether a crash of holder i differs from its
// process simply never moving again, which every interleaving allows:
// only when others can see it, because the record names the process as
// its live holder (observers on its process table may prove it dead) or
// because the kernel lets go of the fence it holds.
func (m *leaseModel) crashMatters(w *leaseVars, i int) bool {
	id := uint8(i + 1)
	return w.recBy == id && w.recFree == 0 || w.fence == id
}

// fenceMoves yields the moves of holder i's RunFenced call. A call that
// finds the fence free takes it at once: waiting only matters while
// another process holds it.
func (m *leaseModel) fenceMoves(pw *LeaseWorld, w *leaseVars, i int, yield func(string, LeaseWorld)) {
	h := &w.h[i]
	switch h.fcall {
	case leaseFenceIdle:
		if h.life == leaseLifeReturned {
			m.emit(pw, w, i, leaseMvRunFenced, yield)
		}
	case leaseFenceWaiting:
		if w.fence == 0 {
			m.emit(pw, w, i, leaseMvFenceTaken, yield)
		}
		if h.flags&leaseLostF != 0 || h.life == leaseLifeEnded {
			m.emit(pw, w, i, leaseMvWaitEnds, yield)
		}
	case leaseFenceWorking:
		m.emit(pw, w, i, leaseMvWorkReturns, yield)
	}
}

// resultMoves yields the results holder i's repository call can have.
func (m *leaseModel) resultMoves(pw *LeaseWorld, w *leaseVars, i int, yield func(string, LeaseWorld)) {
	h := &w.h[i]
	switch {
	case h.op == leaseOpLoad:
		m.emit(pw, w, i, leaseMvLoaded, yield)
		if h.flags&(leaseSeen|leaseTTL) == leaseSeen {
			m.emit(pw, w, i, leaseMvLoadedTTL, yield)
		}
	case m.current(h):
		m.emit(pw, w, i, leaseMvSaved, yield)
		if m.b.Ambiguous {
			m.emit(pw, w, i, leaseMvFailedApplied, yield)
		}
	default:
		m.emit(pw, w, i, leaseMvConflict, yield)
	}
	if m.b.Failures {
		m.emit(pw, w, i, leaseMvFailed, yield)
	}
}

// current reports whether the revision h's write is over is the record's.
func (m *leaseModel) current(h *leaseHolder) bool {
	if h.op == leaseOpRenew {
		return h.flags&leaseWFresh != 0
	}
	return h.flags&leaseLFresh != 0
}

// emit applies move mv of holder i to a copy of w and yields it. pw is w
// packed: only what the move changed is packed again.
func (m *leaseModel) emit(pw *LeaseWorld, w *leaseVars, i int, mv leaseMove, yield func(string, LeaseWorld)) {
	nw := *w
	m.apply(&nw, i, mv)
	if nw.others {
		yield(m.labels[i][mv], nw.pack())
		return
	}
	out := *pw
	out.h[i] = nw.h[i].pack()
	nw.packRecord(&out)
	yield(m.labels[i][mv], out)
}

// apply carries out move mv of holder i.
func (m *leaseModel) apply(w *leaseVars, i int, mv leaseMove) {
	h := &w.h[i]
	switch mv {
	case leaseMvAcquire:
		h.life = leaseLifeAcquiring
		m.fire(w, i, leaseTAcquire, 0, leaseOpNone)
	case leaseMvClose:
		h.flags |= leaseClosed
		m.fire(w, i, leaseTRelease, 0, leaseOpNone)
	case leaseMvRunFenced:
		if w.fence != 0 {
			h.fcall = leaseFenceWaiting
			break
		}
		m.fenceTaken(w, i)
	case leaseMvFenceTaken:
		m.fenceTaken(w, i)
	case leaseMvWaitEnds:
		h.fcall = leaseFenceIdle
	case leaseMvWorkReturns:
		h.fcall = leaseFenceIdle
		w.fence = 0
	case leaseMvRenewDue:
		h.flags &^= leaseRenew
		m.fire(w, i, leaseTRenewDue, 0, leaseOpNone)
	case leaseMvDeadlinePassed:
		m.deadlinePassed(w, i)
	case leaseMvLag:
		h.flags |= leaseLag
	case leaseMvCrash:
		if w.fence == uint8(i+1) {
			w.fence = 0
		}
		*h = leaseHolder{st: m.init, flags: leaseCrashed}
	default:
		m.result(w, i, mv)
	}
	m.tidy(w, i)
}

// result delivers the result of holder i's repository call.
func (m *leaseModel) result(w *leaseVars, i int, mv leaseMove) {
	h := &w.h[i]
	op := h.op
	h.op = leaseOpNone
	switch mv {
	case leaseMvLoaded:
		m.loaded(w, i)
	case leaseMvLoadedTTL:
		m.ttlPassed(w, i)
		m.loaded(w, i)
	case leaseMvSaved:
		m.write(w, i, op, true)
		m.fire(w, i, leaseTSaved, 0, op)
	case leaseMvConflict:
		m.fire(w, i, leaseTConflict, 0, op)
	case leaseMvFailed:
		m.fire(w, i, leaseTRepoFailed, 0, op)
	case leaseMvFailedApplied:
		m.write(w, i, op, false)
		m.fire(w, i, leaseTRepoFailed, 0, op)
	}
}

// ttlPassed lets TTL pass for observer i since its manager first saw the
// current revision: by then every armed holder's deadline has passed,
// unless the holder's clock lagged (see the time comment above).
func (m *leaseModel) ttlPassed(w *leaseVars, i int) {
	w.h[i].flags |= leaseTTL
	w.others = true
	for k := range m.n {
		if w.h[k].flags&(leaseArmed|leaseLag) == leaseArmed {
			w.h[k].flags |= leaseDue
		}
	}
}

// loaded reads the record for holder i, notes a revision new to its
// manager, and fires Loaded. An acquisition that finds the key free, its
// holder dead or its revision silent for TTL must claim it.
func (m *leaseModel) loaded(w *leaseVars, i int) {
	h := &w.h[i]
	h.flags |= leaseLFresh
	if h.flags&leaseSeen == 0 {
		h.flags = h.flags&^leaseTTL | leaseSeen
	}
	f := m.facts(w, i)
	acquiring := h.life == leaseLifeAcquiring
	out := m.fire(w, i, leaseTLoaded, f, leaseOpLoad)
	if acquiring && f&leaseTakeoverFacts != 0 && out&leaseOClaim == 0 {
		w.setFault(leaseFaultRefused, i, uint8(f))
	}
}

// fenceTaken gives holder i's RunFenced call the fence, re-reads the record
// and fires FenceTaken, whose step must answer the call.
func (m *leaseModel) fenceTaken(w *leaseVars, i int) {
	h := &w.h[i]
	w.fence = uint8(i + 1)
	h.fcall = leaseFenceTaken
	m.fire(w, i, leaseTFenceTaken, m.facts(w, i), leaseOpNone)
	if h.fcall == leaseFenceTaken {
		w.setFault(leaseFaultOutputs, i, leaseArgNoAnswer)
		h.fcall, w.fence = leaseFenceIdle, 0 // the world ends here; a stuck call needs no bit of its own
	}
}

// deadlinePassed fires holder i's one-shot deadline timer. A handle still
// held after it breaks DESIGN.md's rule that the holder declares itself
// lost at its deadline.
func (m *leaseModel) deadlinePassed(w *leaseVars, i int) {
	h := &w.h[i]
	h.flags &^= leaseArmed | leaseDue | leaseLag
	m.fire(w, i, leaseTDeadlinePassed, 0, leaseOpNone)
	if h.life == leaseLifeReturned && h.flags&(leaseLostF|leaseClosed) == 0 {
		w.setFault(leaseFaultDeadline, i, h.gen)
	}
}

// facts computes the facts of the record as holder i's manager reads it.
func (m *leaseModel) facts(w *leaseVars, i int) policy.Facts {
	h := &w.h[i]
	var f policy.Facts
	if w.recBy == 0 || w.recFree != 0 {
		f |= leaseFFree
	} else {
		k := int(w.recBy) - 1
		if w.h[k].flags&leaseCrashed != 0 && m.sameTable(i, k) {
			f |= leaseFDead
		}
		if k == i && h.life == leaseLifeReturned && w.recGen == h.gen {
			f |= leaseFOurs
		}
	}
	if h.flags&(leaseSeen|leaseTTL) == leaseSeen|leaseTTL {
		f |= leaseFTTL
	}
	return f
}

func (m *leaseModel) sameTable(i, k int) bool { return (i < m.local) == (k < m.local) }

// write applies holder i's write op to the record; known says whether the
// holder learns the new revision (Saved) or not (a failure after all).
func (m *leaseModel) write(w *leaseVars, i int, op uint8, known bool) {
	h := &w.h[i]
	if h.gen < w.recGen {
		w.setFault(leaseFaultGenBack, i, w.recGen)
	}
	if op == leaseOpClaim {
		if h.gen <= w.top {
			w.setFault(leaseFaultGenRepeat, i, h.gen)
		}
		m.checkTakeover(w, i)
		w.top = max(w.top, h.gen)
	}
	w.recGen, w.recBy, w.recFree = h.gen, uint8(i+1), 0
	if op == leaseOpTombstone {
		w.recFree = 1
	}
	for k := range m.n {
		w.h[k].flags &^= leaseLFresh | leaseWFresh | leaseSeen | leaseTTL
	}
	w.others = true
	if known {
		h.flags |= leaseWFresh
	}
}

// checkTakeover judges holder i's claim, about to replace the record: the
// record's holder, if its handle still holds the lease with a deadline on
// a clock that kept time, must be past that deadline.
func (m *leaseModel) checkTakeover(w *leaseVars, i int) {
	if w.recBy == 0 || w.recFree != 0 || int(w.recBy) == i+1 {
		return
	}
	k := int(w.recBy) - 1
	v := &w.h[k]
	if v.life == leaseLifeReturned && v.gen == w.recGen && v.flags&(leaseArmed|leaseDue|leaseLag) == leaseArmed {
		w.setFault(leaseFaultEarly, i, uint8(k))
	}
}

// fire steps holder i's handle with trigger t and facts f and carries out
// the outputs; done is the repository call whose result t reports. It
// returns the outputs.
func (m *leaseModel) fire(w *leaseVars, i int, t policy.TriggerID, f policy.Facts, done uint8) policy.Outputs {
	h := &w.h[i]
	r := m.p.Step(policy.StateID(h.st), t, f)
	switch {
	case r.Verdict == policy.Ignored:
		return 0
	case r.Verdict != policy.Fired:
		w.setFault(leaseFaultRejected, i, uint8(t))
		return 0
	case int(r.Next) >= len(m.states):
		w.setFault(leaseFaultOutputs, i, leaseArgBadState)
		return 0
	}
	h.st = uint8(r.Next)
	m.carry(w, i, r.Outputs, t, done)
	return r.Outputs
}

// carry carries out holder i's outputs in the family's order, as the
// manager does after a step fired by trigger t.
func (m *leaseModel) carry(w *leaseVars, i int, out policy.Outputs, t policy.TriggerID, done uint8) {
	h := &w.h[i]
	if out&leaseOStopTimers != 0 {
		h.flags &^= leaseTimerBits
	}
	if out&leaseOCalls != 0 {
		m.calls(w, i, out, t)
	}
	if out&leaseOArmDeadline != 0 {
		h.flags |= leaseArmed
		if t == leaseTSaved && (done == leaseOpClaim || done == leaseOpRenew) {
			h.flags &^= leaseDue | leaseLag
		} else {
			h.flags |= leaseLag // it started at an unknown earlier moment
		}
	}
	if out&leaseOSchedule != 0 {
		h.flags |= leaseRenew
	}
	if out&leaseODeclareLost != 0 {
		h.flags = h.flags&^leaseTimerBits | leaseLostF
	}
	if out&leaseOFenceAnswers != 0 {
		m.answerFence(w, i, out, t)
	}
	if out&leaseOReturns != 0 {
		m.returns(w, i, out, t, done)
	}
	if l := h.life; (l == leaseLifeNone || l == leaseLifeEnded) && h.op != leaseOpNone {
		w.setFault(leaseFaultOutputs, i, leaseArgCallLeft)
	}
}

// calls issues the repository calls among out.
func (m *leaseModel) calls(w *leaseVars, i int, out policy.Outputs, t policy.TriggerID) {
	h := &w.h[i]
	if out&leaseOLoad != 0 {
		m.issue(w, i, leaseOpLoad, leaseOLoad)
	}
	if out&leaseOClaim != 0 {
		if h.life != leaseLifeAcquiring || t != leaseTLoaded {
			w.setFault(leaseFaultOutputs, i, leaseOutputBit(leaseOClaim))
		} else {
			if w.recGen >= leaseMaxGeneration {
				panic("fsm: lease world: generation beyond the packed world's range; see leaseMaxGeneration")
			}
			h.gen = w.recGen + 1
			m.issue(w, i, leaseOpClaim, leaseOClaim)
		}
	}
	if out&leaseORenew != 0 {
		if h.life != leaseLifeReturned {
			w.setFault(leaseFaultOutputs, i, leaseOutputBit(leaseORenew))
		} else {
			m.issue(w, i, leaseOpRenew, leaseORenew)
		}
	}
	if out&leaseOTombstone != 0 {
		if h.life != leaseLifeReturned || t != leaseTLoaded {
			w.setFault(leaseFaultOutputs, i, leaseOutputBit(leaseOTombstone))
		} else {
			m.issue(w, i, leaseOpTombstone, leaseOTombstone)
		}
	}
}

// issue starts repository call op for holder i, the only one in flight.
func (m *leaseModel) issue(w *leaseVars, i int, op uint8, o policy.Outputs) {
	h := &w.h[i]
	if h.op != leaseOpNone {
		w.setFault(leaseFaultOutputs, i, leaseOutputBit(o))
		return
	}
	h.op = op
}

// answerFence carries out the answer to the RunFenced call that holds the
// fence: exactly one of runFenced and refuseFenced, in FenceTaken's step.
func (m *leaseModel) answerFence(w *leaseVars, i int, out policy.Outputs, t policy.TriggerID) {
	h := &w.h[i]
	answer := out & leaseOFenceAnswers
	switch {
	case t != leaseTFenceTaken:
		w.setFault(leaseFaultOutputs, i, leaseOutputBit(answer&-answer))
	case answer == leaseOFenceAnswers:
		w.setFault(leaseFaultOutputs, i, leaseArgNoAnswer)
	case answer == leaseORunFenced:
		m.startWork(w, i)
	default:
		h.fcall = leaseFenceIdle
		w.fence = 0
	}
}

// startWork starts holder i's fenced work under the fence it holds: only
// for a handle that has not declared itself lost, with the token the
// record holds.
func (m *leaseModel) startWork(w *leaseVars, i int) {
	h := &w.h[i]
	switch {
	case h.flags&leaseLostF != 0:
		w.setFault(leaseFaultLostWork, i, h.gen)
	case h.life != leaseLifeReturned || w.recBy != uint8(i+1) || w.recFree != 0 || w.recGen != h.gen:
		w.setFault(leaseFaultStale, i, h.gen)
	}
	h.fcall = leaseFenceWorking
}

// returns carries out the answers to the handle's pending Acquire or Close.
func (m *leaseModel) returns(w *leaseVars, i int, out policy.Outputs, t policy.TriggerID, done uint8) {
	h := &w.h[i]
	if out&leaseOAcquired != 0 {
		if h.life != leaseLifeAcquiring || t != leaseTSaved || done != leaseOpClaim {
			w.setFault(leaseFaultOutputs, i, leaseOutputBit(leaseOAcquired))
		} else {
			h.life = leaseLifeReturned
		}
	}
	if out&leaseOHeldError != 0 {
		if h.life != leaseLifeAcquiring {
			w.setFault(leaseFaultOutputs, i, leaseOutputBit(leaseOHeldError))
		} else {
			h.life = leaseLifeNone
		}
	}
	if out&leaseORepoError != 0 {
		switch {
		case h.life == leaseLifeAcquiring:
			h.life = leaseLifeNone
		case h.life != leaseLifeReturned || h.flags&leaseClosed == 0:
			w.setFault(leaseFaultOutputs, i, leaseOutputBit(leaseORepoError))
		}
	}
	if out&leaseOEndHandle != 0 {
		if h.life != leaseLifeReturned {
			w.setFault(leaseFaultOutputs, i, leaseOutputBit(leaseOEndHandle))
		} else {
			h.life = leaseLifeEnded
			h.flags &^= leaseTimerBits | leaseClosed // Close has returned
		}
	}
}

// leaseOutputBit returns the bit index of the single output o.
func leaseOutputBit(o policy.Outputs) uint8 {
	for b := range uint8(len(leaseOutputNames)) {
		if o == 1<<b {
			return b
		}
	}
	return uint8(len(leaseOutputNames))
}

// tidy resets holder i's handle once it is gone for good (Acquire failed,
// or the handle ended and no RunFenced call lingers), keeping the process
// and its manager's notes, so that worlds that differ only in a gone
// handle's leftovers are one world.
func (m *leaseModel) tidy(w *leaseVars, i int) {
	h := &w.h[i]
	if l := h.life; l != leaseLifeNone && l != leaseLifeEnded || h.fcall != leaseFenceIdle || h.op != leaseOpNone || w.fault != leaseFaultNone {
		return
	}
	*h = leaseHolder{st: m.init, flags: h.flags & (leaseCrashed | leaseSeen | leaseTTL)}
}

// setFault records the first fault of a move.
func (w *leaseVars) setFault(f leaseFault, i int, arg uint8) {
	if w.fault == leaseFaultNone {
		w.fault, w.faultAt, w.faultArg = f, uint8(i+1), arg
	}
}

// invariants returns the lease family's invariants: the one that looks at
// a world as it is, and one per fault a move can record.
func (m *leaseModel) invariants() []modelcheck.Invariant[LeaseWorld] {
	invs := []modelcheck.Invariant[LeaseWorld]{{Name: leaseInvOverlap, Check: m.overlap}}
	for f := leaseFaultRejected; f < leaseFaultCount; f++ {
		invs = append(invs, modelcheck.Invariant[LeaseWorld]{
			Name: leaseFaultNames[f],
			Check: func(w LeaseWorld) error {
				if w.fault() != f {
					return nil
				}
				v := w.unpack()
				return m.faultError(&v)
			},
		})
	}
	return invs
}

// overlap requires that fenced work of different generations never runs
// at once. The fence should see to it; the invariant checks that it does,
// on the packed world (it runs on every new world).
func (m *leaseModel) overlap(w LeaseWorld) error {
	first := -1
	for i := range m.n {
		if !leaseWorking(w.h[i]) {
			continue
		}
		if first >= 0 && w.h[i][1]&15 != w.h[first][1]&15 {
			return fmt.Errorf("%s's fenced work with generation %d runs while %s's with generation %d does",
				leaseHolderName(i), w.h[i][1]&15, leaseHolderName(first), w.h[first][1]&15)
		}
		first = i
	}
	return nil
}

// leaseWorking reports whether the packed holder's fenced work runs.
func leaseWorking(h [3]uint8) bool {
	lifeCall := h[1] >> 4
	return lifeCall != leaseLifeCallCrashed && lifeCall%3 == leaseFenceWorking
}

// faultError says what the move into w did wrong.
func (m *leaseModel) faultError(w *leaseVars) error {
	i := int(w.faultAt) - 1
	who, arg := leaseHolderName(i), w.faultArg
	switch w.fault {
	case leaseFaultRejected:
		return fmt.Errorf("%s's policy rejected %s in state %s, which the runtime fires only when it can", who, leaseTriggerName(arg), m.stateName(w.h[i].st))
	case leaseFaultOutputs:
		return fmt.Errorf("%s: %s", who, leaseOutputsReason(arg))
	case leaseFaultGenBack:
		return fmt.Errorf("%s wrote generation %d over a record of generation %d", who, w.recGen, arg)
	case leaseFaultGenRepeat:
		return fmt.Errorf("%s claimed generation %d, which an earlier claim already wrote", who, arg)
	case leaseFaultStale:
		return fmt.Errorf("%s started fenced work with generation %d, but the record is %s", who, arg, leaseRecordText(w))
	case leaseFaultLostWork:
		return fmt.Errorf("%s started fenced work with generation %d after declaring the lease lost", who, arg)
	case leaseFaultEarly:
		return fmt.Errorf("%s's claim replaced generation %d of %s, which still held it and whose deadline had not passed",
			who, w.h[arg].gen, leaseHolderName(int(arg)))
	case leaseFaultRefused:
		return fmt.Errorf("%s's acquisition loaded a record with facts %v and did not claim it", who, LeaseFacts(arg))
	case leaseFaultDeadline:
		return fmt.Errorf("%s got DeadlinePassed and still holds generation %d without declaring it lost", who, arg)
	}
	return fmt.Errorf("unknown fault %d", w.fault)
}

func leaseTriggerName(t uint8) string { return LeaseTrigger(t).String() }

func leaseOutputsReason(arg uint8) string {
	switch arg {
	case leaseArgNoAnswer:
		return "FenceTaken's step must answer the RunFenced call with exactly one of runFenced and refuseFenced"
	case leaseArgCallLeft:
		return "the handle ended, or was dropped, with a repository call in flight"
	case leaseArgBadState:
		return "the step returned a state the policy does not have"
	}
	return "the runtime cannot carry out " + LeaseOutputs(1<<arg).String() + " in this step (see the lease world's runtime semantics)"
}

// owes names a pending call in a world where nothing can move any more.
func (m *leaseModel) owes(pw LeaseWorld) string {
	w := pw.unpack()
	for i := range m.n {
		h := &w.h[i]
		who := leaseHolderName(i)
		switch {
		case h.flags&leaseCrashed != 0:
		case h.life == leaseLifeAcquiring:
			return who + "'s Acquire call has not returned"
		case h.life == leaseLifeReturned && h.flags&leaseClosed != 0:
			return who + "'s Close call has not returned"
		case h.fcall != leaseFenceIdle:
			return who + "'s RunFenced call has not returned"
		}
	}
	return ""
}

// canonical sorts the holders that share a process table, which are
// interchangeable, and renames the references to them. It works on the
// packed world: a holder's three bytes encode all of its variables.
func (m *leaseModel) canonical(w LeaseWorld) LeaseWorld {
	var perm [LeaseMaxHolders]uint8 // perm[new] = old
	for i := range perm {
		perm[i] = uint8(i)
	}
	moved := leaseSortHolders(&w, &perm, 0, m.local)
	moved = leaseSortHolders(&w, &perm, m.local, m.n) || moved
	if !moved {
		return w
	}
	var rename [LeaseMaxHolders + 1]uint8 // old+1 → new+1; 0 stays 0
	c := w
	for to, from := range perm[:m.n] {
		c.h[to] = w.h[from]
		rename[from+1] = uint8(to + 1)
	}
	v := c.unpack()
	v.recBy, v.fence, v.faultAt = rename[v.recBy], rename[v.fence], rename[v.faultAt]
	if v.fault == leaseFaultEarly {
		v.faultArg = rename[v.faultArg+1] - 1
	}
	return v.pack()
}

// leaseSortHolders insertion-sorts perm[lo:hi] by the holders' packed
// variables and reports whether it moved any.
func leaseSortHolders(w *LeaseWorld, perm *[LeaseMaxHolders]uint8, lo, hi int) bool {
	moved := false
	for j := lo + 1; j < hi; j++ {
		for k := j; k > lo && leaseLess(w, int(perm[k]), int(perm[k-1])); k-- {
			perm[k], perm[k-1] = perm[k-1], perm[k]
			moved = true
		}
	}
	return moved
}

// leaseLess orders holders by their variables, then by the references the
// world holds to them, so that holders that compare equal are identical.
func leaseLess(w *LeaseWorld, a, b int) bool {
	x, y := leaseHolderKey(w.h[a]), leaseHolderKey(w.h[b])
	if x != y {
		return x < y
	}
	return leaseRoles(w, a) < leaseRoles(w, b)
}

func leaseHolderKey(h [3]uint8) uint32 { return uint32(h[0])<<16 | uint32(h[1])<<8 | uint32(h[2]) }

// leaseRoles encodes the references the world holds to holder i.
func leaseRoles(w *LeaseWorld, i int) uint8 {
	var r uint8
	id := uint8(i + 1)
	if w.rec>>5 == id {
		r |= 1
	}
	if w.fence&7 == id {
		r |= 2
	}
	if w.ghost&7 == id {
		r |= 4
	}
	if w.fault() == leaseFaultEarly && w.arg == uint8(i) {
		r |= 8
	}
	return r
}

// format renders w for traces: the record and fence, then one line per
// holder.
func (m *leaseModel) format(pw LeaseWorld) string {
	w := pw.unpack()
	var b strings.Builder
	b.WriteString(leaseRecordText(&w))
	if w.fence != 0 {
		b.WriteString("; fence held by " + leaseHolderName(int(w.fence)-1))
	}
	for i := range m.n {
		b.WriteString("\n     ")
		m.formatHolder(&b, &w, i)
	}
	return b.String()
}

func leaseRecordText(w *leaseVars) string {
	if w.recBy == 0 {
		return "no record"
	}
	s := "record g" + strconv.Itoa(int(w.recGen)) + " by " + leaseHolderName(int(w.recBy)-1)
	if w.recFree != 0 {
		s += " (tombstone)"
	}
	return s
}

var leaseLifeNames = [...]string{"", "acquiring", "returned", "ended"}

var leaseFenceCallNames = [...]string{"", "RunFenced waits", "fenced work runs", "RunFenced holds the fence"}

var leaseFlagNames = [...]string{"lost", "loaded revision current", "written revision current", "renewal armed",
	"deadline armed", "deadline passed", "clock lags", "saw revision", "TTL passed", "Close called", "crashed"}

func (m *leaseModel) formatHolder(b *strings.Builder, w *leaseVars, i int) {
	h := &w.h[i]
	b.WriteString(leaseHolderName(i) + " " + m.stateName(h.st))
	if h.life != leaseLifeNone {
		b.WriteString(" g" + strconv.Itoa(int(h.gen)) + ", " + leaseLifeNames[h.life])
	}
	if h.op != leaseOpNone {
		b.WriteString(", " + leaseOpNames[h.op] + " in flight")
	}
	if c := h.fcall; c != leaseFenceIdle {
		b.WriteString(", " + leaseFenceCallNames[c])
	}
	for bit, name := range leaseFlagNames {
		if h.flags&(1<<bit) != 0 {
			b.WriteString(", " + name)
		}
	}
}

func (m *leaseModel) stateName(s uint8) string {
	if int(s) < len(m.states) {
		return m.states[s].Name
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Packing. A holder's life and RunFenced call share four bits (lifeCall:
// life × call, with "Close called" as a life of its own, and 15 for a
// crashed process); its deadline and observer flags share four more
// (clock: none, armed, armed+due, armed+lag, armed+due+lag × none, seen,
// seen+ttl). Both code only what the model can reach: due and lag only
// while armed, ttl only when seen, Close called only while returned, and
// no RunFenced call holding the fence between moves.
const (
	leaseLifeCallCrashed = 15
	leaseLowFlags        = leaseLostF | leaseLFresh | leaseWFresh | leaseRenew
)

// leaseLifeOfCode maps a lifeCall's life code to the life.
var leaseLifeOfCode = [...]uint8{leaseLifeNone, leaseLifeAcquiring, leaseLifeReturned, leaseLifeReturned, leaseLifeEnded}

// leaseDeadlineOfCode maps a clock's deadline code to its flags.
var leaseDeadlineOfCode = [...]leaseFlags{0, leaseArmed, leaseArmed | leaseDue, leaseArmed | leaseLag, leaseArmed | leaseDue | leaseLag}

// leaseObserverOfCode maps a clock's observer code to its flags.
var leaseObserverOfCode = [...]leaseFlags{0, leaseSeen, leaseSeen | leaseTTL}

// pack packs v into a LeaseWorld; unpack inverts it.
func (v *leaseVars) pack() LeaseWorld {
	var w LeaseWorld
	for i := range v.h {
		w.h[i] = v.h[i].pack()
	}
	v.packRecord(&w)
	return w
}

// packRecord packs the variables beside the holders'.
func (v *leaseVars) packRecord(w *LeaseWorld) {
	w.rec = v.recGen | v.recFree<<4 | v.recBy<<5
	w.fence = v.fence | uint8(v.fault)<<3
	w.ghost = v.faultAt | v.top<<3
	w.arg = v.faultArg
}

func (h *leaseHolder) pack() [3]uint8 {
	lifeCall := uint8(leaseLifeCallCrashed)
	if h.flags&leaseCrashed == 0 {
		l := h.life
		switch {
		case l == leaseLifeEnded:
			l = 4
		case l == leaseLifeReturned && h.flags&leaseClosed != 0:
			l = 3
		}
		lifeCall = l*3 + h.fcall
	}
	f := h.flags
	deadline := uint8(0)
	if f&leaseArmed != 0 {
		deadline = 1 + uint8(f&leaseDue/leaseDue) + 2*uint8(f&leaseLag/leaseLag)
	}
	observer := uint8(f&leaseSeen/leaseSeen) + uint8(f&leaseTTL/leaseTTL)
	return [3]uint8{h.st | h.op<<5, h.gen | lifeCall<<4, uint8(f&leaseLowFlags) | (deadline*3+observer)<<4}
}

func (w LeaseWorld) unpack() leaseVars {
	var v leaseVars
	for i := range w.h {
		v.h[i] = leaseUnpackHolder(w.h[i])
	}
	v.recGen, v.recFree, v.recBy = w.rec&15, w.rec>>4&1, w.rec>>5
	v.fence, v.fault = w.fence&7, w.fault()
	v.faultAt, v.top = w.ghost&7, w.ghost>>3
	v.faultArg = w.arg
	return v
}

func leaseUnpackHolder(b [3]uint8) leaseHolder {
	h := leaseHolder{st: b[0] & 31, op: b[0] >> 5, gen: b[1] & 15}
	if lifeCall := b[1] >> 4; lifeCall == leaseLifeCallCrashed {
		h.flags = leaseCrashed
	} else {
		l := lifeCall / 3
		h.life, h.fcall = leaseLifeOfCode[l], lifeCall%3
		if l == 3 {
			h.flags = leaseClosed
		}
	}
	clock := b[2] >> 4
	h.flags |= leaseFlags(b[2])&leaseLowFlags | leaseDeadlineOfCode[clock/3] | leaseObserverOfCode[clock%3]
	return h
}

// fault returns the fault the move into w recorded.
func (w LeaseWorld) fault() leaseFault { return leaseFault(w.fence >> 3) }
