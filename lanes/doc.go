// Package lanes runs work per key: at most one activation of a key at a
// time, at most MaxConcurrent activations at once across all keys, and
// keys waiting for a slot served in arrival order.
//
// Wake(key) never waits for the activation. An idle key starts at once
// while a slot is free and nobody waits (Started); otherwise it waits at
// the back of the queue (Queued), or fails with ErrQueueFull when
// MaxQueued lanes already wait. Every wake that arrives before an
// activation starts is served by it: waking a waiting key changes nothing
// (Coalesced); waking a running key makes it owe one follow-up activation
// (Queued the first time, Coalesced after). The owed follow-up takes a
// queue place at once, so such a wake fails with ErrQueueFull when
// MaxQueued lanes already wait; a successful wake is never dropped except
// by Cancel or Close. When the activation ends, the follow-up goes to the
// back of the queue, or starts at once if a slot is free and nobody waits;
// so a key woken again while it ran waits behind the keys queued meanwhile.
// Without MaxQueued the queue holds at most one entry per key.
//
// # Interruption
//
// Go cannot kill a goroutine: the lanes interrupt an activation by
// cancelling its context (Cancel, Close, TurnTimeout; context.Cause says
// which), and everything that waits for an activation to end waits for
// Activate to return. An activation that returns nil succeeded even if an
// interruption arrived meanwhile; one that returns its context's error
// after an interruption was Interrupted; any other error, a panic or a
// runtime.Goexit is Failed. OnExit hears each of these, and Interrupted
// with Started false for an owed activation dropped by Cancel or Close
// before it started (then Activate was never called). For an activation
// that ran, OnExit runs before the key's lane moves on and before its
// slot passes to another key. The report of a dropped wake runs on the
// goroutine of the Cancel or Close that dropped it, after the lane has
// moved on: it may run while another OnExit of the same key does, and be
// heard after a later activation's. A panic or runtime.Goexit in OnExit
// is logged as a warning and the lanes go on.
//
// Cancel(ctx, key) drops the wakes key owes, interrupts its activation and
// returns once Activate has returned and OnExit has run. Close refuses
// later wakes with ErrClosed, drops the queue, interrupts every activation
// and waits for them; cancelling the ctx given to New closes the lanes too.
// Activations run with that ctx's values, not its cancellation.
//
// An activation's context is done once the activation has returned, with
// context.Canceled as its cause, as a request's context is once its
// handler has returned. It costs one small allocation (24 bytes; a
// goroutine that runs activations one after another makes them eight at a
// time): the standard library's cancellable context behind it is made
// only when the activation takes its Done channel, or derives a context
// from it, or asks context.Cause after a cancellation. Err and values cost
// nothing more, and the context takes no lock of its own (context.go).
//
// Nothing is persisted: lanes live in one process. A key's entry is
// deleted when it goes idle, so memory does not grow with the number of
// keys ever woken (a few dozen idle entries are kept for reuse, without
// their keys: the lanes keep no idle key reachable).
//
// # Metrics and hooks
//
// Config.Metrics feeds a metrics library, as client-go workqueue's
// MetricsProvider does: the depth, wakes by result, the time a lane
// waited in the queue before its activation started, activation times,
// the activations running, owed wakes dropped and turn timeouts; and
// LongestRunning reads the age of the oldest running activation when the
// library scrapes. The depth is the queue places in use, as MaxQueued
// counts them: the lanes waiting for a slot and the follow-ups owed by
// running lanes, so a wake refused with ErrQueueFull finds it at
// MaxQueued (0 with NoQueue). Metrics hears no keys and is called
// without the lanes' lock; nil means none and costs nothing: no
// allocation, lock or clock reading.
//
// Config.Hooks hear the same events key by key, for logs, traces or
// accounts per key, some with the lanes' lock held. Metrics is not built
// on Hooks: wake results, the activations running and dropped wakes have
// no hook, so Hooks would have had to grow as much as a Metrics of their
// own; and a hook called under the lock binds the library behind it not
// to block and not to call back into the lanes. Metrics gets its gauges
// as changes instead, which add up in any order once the lock is
// released.
//
// # Policy
//
// Each key's lane is an instance of the generated lane policy
// (spec/lane.fsm): the runtime supplies the facts slotFree, queueRoom and
// queueEmpty and carries out the policy's outputs; it never looks at state
// names. A custom policy of the lane family can be passed in
// Config.Policy. A policy may refuse Wake (it means ErrClosed); any other
// refusal panics, as a policy that does not fit this runtime, and so does
// an output the runtime cannot carry out (a second activation of one key,
// a slot given back that the lane does not hold, ...).
//
// What the outputs do to the queue, the queue places and the slots is one
// piece of code, internal/lanestep, which this package runs under its lock
// and the lane world of package worldmodel runs in every world it
// explores: a bug there is a model-checking violation, not only a failing
// test.
//
// The caller's duties:
//
//  1. Activate returns soon after its context is cancelled.
//  2. OnExit and the Metrics methods do not call Cancel or Close of the
//     same lanes, nor wait for them; nor does Activate call Close or wait
//     for it (Close waits for every activation to return, the caller's
//     own too, so it would wait for ever). Activate cancels its own key,
//     or a key whose activation may cancel its own, only with a ctx that
//     ends: Cancel waits for the activation, here the caller. To stop the
//     lanes from inside, cancel the context given to New, whose Close
//     runs on a goroutine of its own.
//  3. Close is called (or New's ctx cancelled) before the program drops
//     the lanes, so that their goroutines end.
//
// Built with the tag collabmonitor, a contract monitor (monitor.go)
// checks what the step cannot see: Activate runs only with its lane's
// slot, one activation per key and no more than the slots in use at
// once, each activation ends once, and each Wake gets exactly one
// answer. Without the tag it costs nothing.
//
// # Locking
//
// One mutex, Lanes.mu, guards the lanes' bookkeeping: the map of lanes,
// every lane's fields, the queue, the counts of slots and queue places,
// and the lists kept beside them (each field says so where it is
// declared). Each Wake, Cancel and Close, and each activation's end, takes
// it once, for its step and the grants after it; an activation's end also
// starts there the activation that its goroutine runs next. A wake or an
// end that finds it held steps aside (runtime.Gosched) and tries again,
// twice, before it waits for it: other goroutines, often activations with
// work outside the lock, run meanwhile (Lanes.lock). What needs no
// lock is done before or after: the next activation's context is made
// before the end takes the lock, the new activations' goroutines are
// started, the metrics told and the dropped wakes reported after it is
// released. A burst of wakes of one key, and an activation that wakes its
// own key, find its lane without a lookup in the map (Lanes.recent).
// Lanes.activations, which Close waits for, counts the activation
// goroutines' runs, not each activation: an activation that a goroutine
// runs next takes over the count of the one before, which the lock orders
// before any Close that follows.
package lanes
