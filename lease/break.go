package lease

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// breakAttempts bounds Break's retries against a holder that keeps
// renewing between its read and its write.
const breakAttempts = 5

// Break ends the lease on key from outside, for an operator facing a
// stuck holder. It writes over the record a tombstone of the next
// generation, marked Broken and naming this process, so that:
//
//   - the holder's next renewal meets a revision conflict, and it
//     declares the lease lost (its fenced work is cancelled then);
//   - its fenced work that starts from now on is refused: RunFenced
//     re-reads the record under the fence and finds another generation;
//   - the next acquisition takes the key at once, with a generation above
//     the break's, as over any tombstone.
//
// Fenced work already running when the break lands runs on until its
// holder finds the lease lost: Break does not wait for the fence, which a
// stuck holder may keep.
//
// Break retries a holder that renews between its read and its write, up
// to breakAttempts times. A holder that took the key over meanwhile, of
// another generation, is not the one Break was asked to end: Break
// returns an error wrapping store.ErrRevisionConflict, which names it,
// and writes nothing; break it anew if it is stuck too.
//
// A holder that may run on this process table (judged Alive, or Unknown:
// there but not inspectable, which counts as alive) is refused with a
// *HeldError unless force: breaking it lets a successor in while it still
// works. A dead holder is broken; so is one in another process table,
// which cannot be judged here. A
// key with no lease (no record, or a tombstone) is ErrNotHeld, and
// nothing is written. Break returns the snapshot it broke. A nil p is
// platform.OS(); Break uses its process identity, judgement and clock.
func Break(ctx context.Context, repo store.Repository, p *platform.Platform, key string, force bool) (store.Snapshot, error) {
	if p == nil {
		p = platform.OS()
	}
	if err := store.ValidateKey(key); err != nil {
		return store.Snapshot{}, err
	}
	self, err := p.Process.Self()
	if err != nil {
		return store.Snapshot{}, err
	}
	var target store.Token // the generation the first read found
	for attempt := 1; ; attempt++ {
		rec, ok, err := repo.Load(ctx, key)
		if attempt == 1 {
			target = rec.Snapshot.Generation
		}
		switch {
		case err != nil:
			return store.Snapshot{}, err
		case !ok || rec.Snapshot.Released:
			return store.Snapshot{}, ErrNotHeld
		case attempt > 1 && rec.Snapshot.Generation != target:
			return store.Snapshot{}, &store.RepositoryError{Op: "break", Key: key, Err: fmt.Errorf("%w: generation %d, held by %v, took the key over from generation %d while the break was retried",
				store.ErrRevisionConflict, rec.Snapshot.Generation, rec.Snapshot.Holder, target)}
		case !force && mayRun(p.Process.Judge(rec.Snapshot.Holder).Liveness):
			holder := rec.Snapshot.Holder
			return store.Snapshot{}, &HeldError{Key: key, Holder: &holder}
		case rec.Snapshot.Generation == math.MaxUint64:
			return store.Snapshot{}, &store.RepositoryError{Op: "break", Key: key, Err: errors.New("the generation cannot grow past its largest value")}
		}
		tomb := store.Snapshot{Generation: rec.Snapshot.Generation + 1, Holder: self, Released: true, Broken: true,
			RenewedAt: p.GetClock().Now(), TTL: rec.Snapshot.TTL}
		if monitoring {
			monitorBreak(p, key, rec.Snapshot, tomb, force)
		}
		_, err = repo.Save(ctx, key, tomb, rec.Revision)
		if err == nil || !errors.Is(err, store.ErrRevisionConflict) || attempt == breakAttempts {
			return rec.Snapshot, err
		}
	}
}

// mayRun reports whether a holder of this process table judged l may
// still run: Alive, or Unknown, which counts as alive.
func mayRun(l platform.Liveness) bool { return l == platform.Alive || l == platform.Unknown }
