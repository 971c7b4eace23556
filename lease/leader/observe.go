package leader

import (
	"context"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// Leader is a key's leader as an observer sees it: etcd's Observe and
// client-go's OnNewLeader hear the same.
type Leader struct {
	// Holder is the leading process; Token its term's fencing token. A
	// zero Token means no leader: the key has no record, or a tombstone
	// (released, or broken).
	Holder platform.Identity
	Token  lease.Token
	// Value is what the leader publishes with its lease (Config.Value,
	// lease.WithValue), "" for none.
	Value string
	// Since is when the observer first saw this term, on its own clock.
	Since time.Time
	// Liveness is the leader's process as the observer's platform judges
	// it: Alive, Dead (a successor takes over at once), Unknown, or
	// Remote (another process table, judged by silence alone).
	Liveness platform.Liveness
	// Silent says the record has not been renewed for its TTL since the
	// observer first saw its revision: the leader is paused, partitioned
	// or gone, and a successor may take over.
	Silent bool
}

// Observe reports the leader of key in repo as it changes, until ctx
// ends: f hears the leader (or its absence) first, then each change of
// term (with the value its leader publishes), of the leader's liveness,
// and of its silence. It reads the record
// every interval (a tenth of the TTL suits); a read that fails is tried
// again at the next one, and f hears nothing of it. It returns
// context.Cause(ctx). A nil p is platform.OS(); its clock and judgement of
// processes are the observer's. f runs on Observe's goroutine: a slow f
// delays the next read.
//
// Observe takes no part in the election and writes nothing, so any
// process may observe, also one that never campaigns. It polls: a change
// is heard up to an interval late.
func Observe(ctx context.Context, repo store.Repository, p *platform.Platform, key string, interval time.Duration, f func(Leader)) error {
	if p == nil {
		p = platform.OS()
	}
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if interval <= 0 {
		return &ConfigError{"interval", "of Observe is not positive"}
	}
	clock := p.GetClock()
	var (
		last     Leader
		heard    bool
		rev      store.Revision
		revSince time.Duration // when the observer first saw rev, on its monotonic clock
	)
	for {
		if rec, ok, err := repo.Load(ctx, key); err == nil {
			now := clock.Monotonic()
			if !ok || rec.Revision != rev {
				rev, revSince = rec.Revision, now
			}
			cur := Leader{}
			if ok && !rec.Snapshot.Released {
				cur = Leader{Holder: rec.Snapshot.Holder, Token: rec.Snapshot.Generation, Value: rec.Snapshot.Value, Since: last.Since,
					Liveness: p.Process.Judge(rec.Snapshot.Holder).Liveness, Silent: now-revSince >= rec.Snapshot.TTL}
				if cur.Token != last.Token || cur.Holder != last.Holder {
					cur.Since = clock.Now()
				}
			}
			if !heard || cur != last {
				heard, last = true, cur
				f(cur)
			}
		}
		t := clock.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-t.C():
		}
	}
}
