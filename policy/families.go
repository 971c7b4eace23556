package policy

import "slices"

// Word is one name of a vocabulary with its doc comment.
type Word struct {
	Name string
	Doc  string
}

// Family is a vocabulary that several policies share: the triggers the
// runtime fires, the facts it supplies and the outputs it carries out, each
// in the order that numbers it. Every policy of a family declares exactly
// these words, so the runtime drives any of them with the same IDs; the
// states are each policy's own, and the runtime never looks at them.
//
// The runtime carries out the outputs of one step in the order of Outputs.
type Family struct {
	Name     string
	Doc      string
	Triggers []Word
	Facts    []Word
	Outputs  []Word
	// Properties are what the family's world (package worldmodel)
	// checks of every policy: the safety properties, which every policy
	// keeps, then the guarantees, which a spec may waive.
	Properties []Property
}

// Property is one invariant of a family's world. Name is the word a
// spec's waive line uses; Invariant is how a violation names it.
type Property struct {
	Name      string
	Invariant string
	Doc       string
	// Guarantee says a policy may waive it: a promise of service
	// (a free key can be acquired, a wake is served) that a policy may
	// trade for safety or for a cheaper runtime. The others are safety,
	// which no policy of the family may give up.
	Guarantee bool
}

// Guarantees returns the names of f's properties that a policy may waive.
func (f Family) Guarantees() []string {
	var names []string
	for _, p := range f.Properties {
		if p.Guarantee {
			names = append(names, p.Name)
		}
	}
	return names
}

// Property returns f's property named name (a spec's word, or a
// violation's Invariant).
func (f Family) Property(name string) (Property, bool) {
	for _, p := range f.Properties {
		if p.Name == name || p.Invariant == name {
			return p, true
		}
	}
	return Property{}, false
}

// LookupFamily returns the family named name ("lane", "lease" or "turn").
// The returned value is a copy: changing it changes no other caller's.
func LookupFamily(name string) (Family, bool) {
	for _, f := range families {
		if f.Name == name {
			return f.clone(), true
		}
	}
	return Family{}, false
}

// Families returns every family, sorted by name, as copies.
func Families() []Family {
	fs := make([]Family, len(families))
	for i, f := range families {
		fs[i] = f.clone()
	}
	return fs
}

// clone copies the word lists, so that callers cannot change the package's
// vocabularies, which numbering every policy of a family depends on.
func (f Family) clone() Family {
	f.Triggers = slices.Clone(f.Triggers)
	f.Facts = slices.Clone(f.Facts)
	f.Outputs = slices.Clone(f.Outputs)
	f.Properties = slices.Clone(f.Properties)
	return f
}

// families holds the vocabularies, sorted by name. The spec files in the
// spec directory declare the same words, in the same order, with the same
// docs; a test keeps them so.
var families = []Family{laneFamily, leaseFamily, turnFamily}

// laneFamily is the vocabulary of one key's lane in package lanes.
var laneFamily = Family{
	Name: "lane",
	Doc: "A lane policy decides one key's activation cycle in package lanes. " +
		"The runtime keeps the slot pool (MaxConcurrent), the queue of waiting lanes in arrival order " +
		"and the count of queue places reserved for owed follow-ups (MaxQueued). Under its lock it " +
		"computes the facts, steps the lane, carries out the outputs in this order, and then, while a " +
		"slot is free and a lane waits, fires SlotGranted on the lane at the head of the queue. " +
		"A lane created after Close gets Close before any other trigger. A rejected Wake returns " +
		"ErrClosed; any other rejection is a runtime bug.",
	Triggers: []Word{
		{"Wake", "Wake asks for an activation of the key (lanes.Wake)."},
		{"SlotGranted", "SlotGranted hands a freed slot to this lane, the one that has waited longest."},
		{"ActivationEnded", "ActivationEnded says the activation's function returned and OnExit ran for it."},
		{"Timeout", "Timeout says the running activation has run longer than the turn timeout."},
		{"Cancel", "Cancel asks to drop the key's owed wakes and stop its activation (lanes.Cancel)."},
		{"Close", "Close closes the lanes: every lane gets it, and a lane created later gets it first."},
	},
	Facts: []Word{
		{"slotFree", "slotFree: fewer activations than MaxConcurrent run and no lane waits in the queue."},
		{"queueRoom", "queueRoom: waiting lanes plus owed follow-ups are fewer than MaxQueued (always, without MaxQueued)."},
		{"queueEmpty", "queueEmpty: no lane waits in the queue."},
	},
	Outputs: []Word{
		{"dequeue", "dequeue removes the lane from the queue, giving back its queue place."},
		{"unreserve", "unreserve gives back the queue place that the owed follow-up held."},
		{"interrupt", "interrupt cancels the running activation's context; it ends when its function returns."},
		{"releaseSlot", "releaseSlot gives the activation's slot back; after the step the runtime grants free slots to the queue's head."},
		{"reserve", "reserve takes a queue place for the follow-up a running lane owes, without a position in line yet."},
		{"enqueue", "enqueue puts the lane at the back of the queue, taking a queue place."},
		{"start", "start takes a slot and starts an activation of the key, with the turn timeout armed."},
		{"forget", "forget deletes the lane's entry from the runtime's map, so idle keys cost nothing."},
		{"reportInterrupted", "reportInterrupted calls OnExit with Interrupted for an owed activation that is dropped before it starts."},
		{"started", "started: Wake returns Started."},
		{"queued", "queued: Wake returns Queued."},
		{"coalesced", "coalesced: Wake returns Coalesced."},
		{"queueFull", "queueFull: Wake returns ErrQueueFull."},
	},
	Properties: []Property{
		{"runtimeSteps", "the runtime can carry out every step", "The policy handles every trigger where the runtime fires it, answers each Wake once, and asks only for what the runtime can do there.", false},
		{"nothingAfterClose", "nothing starts after close", "No activation starts once Close has been fired.", false},
		{"activationsServeWakes", "every activation serves a wake", "An activation starts only for a successful wake that it serves.", false},
		{"longestWaitingFirst", "a freed slot goes to the longest-waiting lane", "A freed slot goes to the lane at the head of the queue.", false},
		{"truthfulAnswers", "wake answers truthfully", "Wake's answer says what the runtime did: started, queued, coalesced into an owed activation, or refused.", false},
		{"droppedReported", "dropped wakes are reported interrupted", "An owed activation that cancel or close drops before it starts is reported to OnExit as interrupted, once.", false},
		{"interrupts", "cancel, close and timeout interrupt the activation", "Cancel, Close and the turn timeout cancel the running activation's context.", false},
		{"onePerKey", "at most one activation per key", "At most one activation of a key runs at a time.", false},
		{"maxConcurrent", "at most MaxConcurrent running", "At most MaxConcurrent activations run at once.", false},
		{"maxQueued", "at most MaxQueued waiting", "Queued lanes plus reserved places never exceed MaxQueued.", false},
		{"slotsHeld", "a slot is held exactly while its activation runs", "A slot is taken by each activation that starts and given back when it ends.", false},
		{"queuePlaces", "queue places belong to owed wakes", "A lane holds a queue place only for a wake it owes.", false},
		{"entries", "a lane has an entry exactly while it holds something", "The runtime's map keeps a lane exactly while it runs, waits or owes, so idle keys cost nothing.", false},
		{"wakesServed", "every successful wake is served", "Every wake answered started, queued or coalesced is served by an activation that starts after it, unless cancel or close drops it.", true},
	},
}

// leaseFamily is the vocabulary of one lease handle in package lease.
var leaseFamily = Family{
	Name: "lease",
	Doc: "A lease policy decides one lease handle's lifecycle, and the observer's takeover decision, " +
		"in package lease. The manager makes at most one repository call per handle at a time and " +
		"fires its result (Loaded, Saved, Conflict or RepoFailed), fires Release only when no call is " +
		"in flight, computes the facts from the record it just loaded or re-read, and carries out the " +
		"outputs in this order. A rejection is a manager bug.",
	Triggers: []Word{
		{"Acquire", "Acquire is the acquisition call (Manager.Acquire) starting."},
		{"Loaded", "Loaded says the record of the key was read."},
		{"Saved", "Saved says the write the handle asked for succeeded."},
		{"Conflict", "Conflict says another writer moved the record first (a revision conflict)."},
		{"RepoFailed", "RepoFailed says the repository call failed (or its context ended)."},
		{"RenewDue", "RenewDue says the renewal timer fired."},
		{"DeadlinePassed", "DeadlinePassed says TTL has passed since the start of the last successful write of this holder."},
		{"FenceTaken", "FenceTaken says a RunFenced call holds the repository's fence and re-read the record."},
		{"Release", "Release is the handle's Close."},
	},
	Facts: []Word{
		{"recordFree", "recordFree: the key has no record, or its record is a tombstone."},
		{"holderDead", "holderDead: the record's holder shares this process table and is proven dead."},
		{"ttlElapsed", "ttlElapsed: TTL has passed on this manager's own monotonic clock since it first saw this record revision."},
		{"recordOurs", "recordOurs: the record still holds this handle's generation."},
		{"holderLocal", "holderLocal: the record's holder shares this process table (so its process can be judged); one on another process table (another host or boot, another pid namespace) is judged by the TTL alone."},
	},
	Outputs: []Word{
		{"stopTimers", "stopTimers stops the renewal and deadline timers."},
		{"load", "load reads the key's record; the result fires Loaded or RepoFailed."},
		{"claim", "claim writes this holder with the next generation (one above the loaded record's, tombstones included) over the loaded revision."},
		{"renew", "renew rewrites the record with a new revision and the same generation over the last revision this handle wrote."},
		{"tombstone", "tombstone writes a tombstone keeping this generation over the loaded revision."},
		{"armDeadline", "armDeadline starts the loss window at the start of the write that just succeeded: DeadlinePassed fires TTL after it."},
		{"scheduleRenew", "scheduleRenew arms the renewal timer one heartbeat from now."},
		{"scheduleRetry", "scheduleRetry arms the renewal timer a short retry delay from now, after a failed renew."},
		{"declareLost", "declareLost ends the lease: Lost() closes, Err() is ErrLost, fenced work is cancelled with cause ErrLost, timers stop."},
		{"runFenced", "runFenced runs the fenced work with the token under the fence, in a context that loss cancels."},
		{"refuseFenced", "refuseFenced releases the fence without running the work; RunFenced returns ErrLost."},
		{"acquired", "acquired: Acquire returns the handle, its token the new generation."},
		{"heldError", "heldError: Acquire returns a *HeldError naming the live holder."},
		{"repoError", "repoError: the pending call (Acquire or Close) returns a *RepositoryError."},
		{"endHandle", "endHandle ends the handle: fenced work still running is cancelled and Close returns."},
	},
	Properties: []Property{
		{"handledTriggers", "no rejected trigger", "The policy handles every trigger where the manager fires it.", false},
		{"runtimeOutputs", "outputs the runtime can carry out", "The policy asks only for outputs the manager can carry out where it asks for them.", false},
		{"generationGrows", "generation never decreases", "A write never lowers the record's generation.", false},
		{"generationFresh", "generation never repeats", "A claim never writes a generation an earlier claim wrote.", false},
		{"fencedCurrent", "fenced work starts with the current generation", "Fenced work starts only while the record holds the handle's generation.", false},
		{"noWorkAfterLoss", "lost holder starts no fenced work", "A handle that declared the lease lost never starts fenced work.", false},
		{"fencedApart", "fenced sections never overlap", "Fenced work of two generations of a key never runs at once.", false},
		{"noEarlyTakeover", "no takeover before the holder's deadline", "A claim never replaces a holder that still holds the lease before its deadline, unless the holder's clock lagged.", false},
		{"lossAtDeadline", "holder declares loss at its deadline", "A holder that reaches its deadline declares the lease lost.", false},
		{"lossOnConflict", "holder declares loss on a renewal's conflict", "A renewal that meets a revision conflict ends the lease.", false},
		{"freeKeyAcquired", "free key acquirable", "An acquisition that finds the key free (no record, or a tombstone) claims it.", true},
		{"deadHolderTakenOver", "key of a dead holder acquirable", "An acquisition that finds the holder proven dead on this process table claims the key.", true},
		{"silentLocalTakenOver", "key of a silent holder on this process table acquirable", "An acquisition that finds a holder on this process table silent for the TTL (alive but paused, stuck, or not to be inspected) claims the key.", true},
		{"silentRemoteTakenOver", "key of a silent holder on another process table acquirable", "An acquisition that finds a holder on another process table (another host or boot, another pid namespace) silent for the TTL claims the key.", true},
	},
}

// turnFamily is the vocabulary of one task's turn at a process lock in
// package plock.
var turnFamily = Family{
	Name: "turn",
	Doc: "A turn policy decides one task's turn at a process lock inside one process, in package plock. " +
		"The turn registry (one entry per lock) keeps the turn's owner and the queue of waiting tasks " +
		"in arrival order, computes the facts and steps the task under its lock, and carries out the " +
		"outputs in this order; passTurn fires Turn on the task it hands the turn to. It fires Abort " +
		"when the task's context is done while the task waits (in the queue or in a backoff); a " +
		"context done during an attempt is ignored there and takes effect at the backoff that follows. " +
		"A rejection is a registry bug.",
	Triggers: []Word{
		{"Request", "Request is the acquisition call (plock.Acquire) starting."},
		{"Turn", "Turn hands this waiting task the turn: the previous owner released the lock or gave up."},
		{"Acquired", "Acquired says the attempt took the lock."},
		{"Busy", "Busy says the attempt found the lock held by another process."},
		{"AttemptFailed", "AttemptFailed says the attempt failed with an error other than a held lock."},
		{"Retry", "Retry says the backoff after a busy attempt has passed."},
		{"Abort", "Abort says the call's context is done."},
		{"Release", "Release is the lock's Release (or Close) call."},
	},
	Facts: []Word{
		{"turnFree", "turnFree: no task of this process owns the turn and none waits for it."},
		{"wait", "wait: the call asked to wait for the holder (the wait option)."},
	},
	Outputs: []Word{
		{"leaveQueue", "leaveQueue removes the task from its place in the queue; the others keep their order."},
		{"unlock", "unlock releases the lock itself (the SQLite connection or the lock file)."},
		{"passTurn", "passTurn ends this task's turn: the task at the head of the queue, if any, leaves it, owns the turn and gets Turn."},
		{"takeTurn", "takeTurn makes this task the owner of the free turn."},
		{"enqueue", "enqueue puts the task at the back of the queue."},
		{"attempt", "attempt makes one attempt at the lock; its outcome fires Acquired, Busy or AttemptFailed."},
		{"backoff", "backoff waits a backoff, then fires Retry."},
		{"returnLock", "returnLock: the call returns the held lock."},
		{"returnHeld", "returnHeld: the call returns a *HeldError naming the holder."},
		{"returnError", "returnError: the call returns the attempt's error."},
		{"returnCause", "returnCause: the call returns the context's cause."},
	},
	Properties: []Property{
		{"noPanic", "runtime never panics", "The registry can carry out every step: no rejected trigger, no output it cannot do there.", false},
		{"oneAtLock", "one task at the lock", "At most one task of the process attempts or holds the lock.", false},
		{"queueListed", "queue lists its waiters", "The queue holds exactly the tasks that wait in it.", false},
		{"turnPassed", "turn passed on", "A task that lets go of the turn passes it to the next waiter.", false},
		{"lockHeld", "lock held by its call", "A call that returns the lock holds it, and only then.", false},
		{"callsReturn", "call returns a lock or an error", "Every call returns, with the lock, a *HeldError, the attempt's error or the context's cause.", false},
		{"abortKeepsOrder", "abort leaves the queue in order", "A task that aborts leaves the others' order unchanged.", false},
		{"arrivalOrder", "arrival order", "Waiters are served in the order they arrived.", true},
		{"heldAtOnce", "no wait: held at once", "Without the wait option, a task that finds the lock busy in the process gets a *HeldError at once.", true},
	},
}

// Guarantees splits the guarantees of p's family into those p keeps and
// those its spec waives (Table.Waived); both are nil for a policy of no
// family.
func Guarantees(p Policy) (kept, waived []Property) {
	f, ok := LookupFamily(p.Family())
	if !ok {
		return nil, nil
	}
	for _, prop := range f.Properties {
		switch {
		case !prop.Guarantee:
		case p.Table().Waives(prop.Name):
			waived = append(waived, prop)
		default:
			kept = append(kept, prop)
		}
	}
	return kept, waived
}
