// Package leader elects one leader among processes that share a lease
// repository, and runs a function while this process leads: the job of
// client-go's leaderelection, on a collab lease.
//
// [Run] campaigns for the lease on a key ([lease.Manager.AcquireWait]).
// Once it holds the lease, it calls Config.Lead with a context that is
// cancelled, with cause [lease.ErrLost], when the lease is lost (a renewal
// conflict, or no renewal within the TTL), and with the cause of Run's
// context when that ends. After a loss it campaigns again. When Run's
// context ends it releases the lease, so that another process leads at
// once, and returns the context's cause. When Lead returns on its own,
// Run releases the lease and returns Lead's error: a leader that is done
// steps down. However a term ends (Lead returns or panics, the lease is
// lost, Run's context ends), Lead's context is cancelled before the lease
// is let go, and Config.OnStopped runs after both.
//
// A successor leads as the lease is taken over: at once when the leader
// releases the lease (the release wakes the waiting candidates where the
// repository can tell them, store.Watcher), soon after when its process
// is gone from this process table (killed, crashed: the candidates' next
// poll, a tenth of the TTL), and once the TTL has passed since the successor
// first saw the leader's last record when the leader is silent (paused,
// partitioned, on another host). A leader paused past its TTL learns of
// the loss when it resumes, before its next renewal: its Lead's context
// is cancelled then, and a successor may already lead.
//
// [Observe] tells who leads a key, for followers and for processes that
// never campaign: the leader's process and term, the value it publishes
// (Config.Value: where to reach it, its version), since when, whether this
// host finds it alive, dead or on another process table, and whether its
// record has been silent for its TTL. It is what client-go's OnNewLeader
// and etcd's Observe give; it is a function of its own rather than a
// callback of Config because it needs only the repository, so that any
// process can watch an election it takes no part in.
//
// The caller's duties:
//
//  1. Lead returns soon after its context is cancelled and does nothing
//     that needs leadership after that: Go cannot stop a goroutine.
//  2. Work that must not run under two leaders at once is fenced: done
//     through [lease.Lease.RunFenced], or checked by the resource against
//     the token Lead receives (the highest token it has seen wins). The
//     lease gives no other guarantee to a leader paused past its TTL.
//  3. Every candidate uses the same repository and key, and managers with
//     one TTL (lease's duty 4).
//  4. The Manager outlives Run. Closing it ends the campaign with
//     lease.ErrClosed, but the Manager lets the lease go first and Lead
//     hears of it after, so another process may lead while Lead still
//     runs: to step down cleanly, cancel Run's context and wait for Run
//     to return before closing the Manager.
package leader
