package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rivus/collab/lease/internal/check"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// Load reads key's row.
func (r *Repository) Load(ctx context.Context, key string) (store.Record, bool, error) {
	if err := check.Call(ctx, key); err != nil {
		return store.Record{}, false, err
	}
	return r.read(ctx, r.pool, r.q.load, "load", key)
}

// rowQuerier is a pool or a transaction.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// read runs query, load or loadForUpdate, for key's row, and decodes it.
// A row that decode refuses is a *store.RepositoryError of op wrapping a
// *store.CorruptRecordError.
func (r *Repository) read(ctx context.Context, q rowQuerier, query, op, key string) (store.Record, bool, error) {
	var row storedRow
	err := q.QueryRow(ctx, query, key).Scan(&row.revision, &row.generation, &row.holder, &row.released, &row.renewedAt, &row.ttl, &row.broken, &row.value)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Record{}, false, nil
	}
	if err != nil {
		return store.Record{}, false, fail(ctx, op, key, err)
	}
	rec, err := row.decode()
	if err != nil {
		return store.Record{}, false, &store.RepositoryError{Op: op, Key: key, Err: &store.CorruptRecordError{Key: key, Where: r.where, Err: err}}
	}
	return rec, true, nil
}

// Save writes s over expected in one conditional statement, which writes
// only over a row it recognises as valid; when it writes nothing, settle
// tells why.
func (r *Repository) Save(ctx context.Context, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	if err := check.Save(ctx, key, s); err != nil {
		return 0, err
	}
	rev, err := r.save(ctx, key, s, expected)
	if err == nil && s.Released {
		r.notifyFreed(ctx, key)
	}
	return rev, err
}

// save is Save, without the notification of a tombstone.
func (r *Repository) save(ctx context.Context, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	query, args := r.saveQuery(key, s, expected)
	var rev int64
	err := r.pool.QueryRow(ctx, query, args...).Scan(&rev)
	if errors.Is(err, pgx.ErrNoRows) {
		return r.settle(ctx, key, s, expected)
	}
	if err != nil {
		return 0, fail(ctx, "save", key, err)
	}
	return store.Revision(rev), nil
}

// saveQuery returns the statement that writes s over expected, and its
// arguments. A generation above the int64 range is stored as its two's
// complement bits, which read back as the same Token; a revision that
// large matches no row. The update's first overwriteParams arguments are
// the overwrite statement's.
func (r *Repository) saveQuery(key string, s store.Snapshot, expected store.Revision) (string, []any) {
	gen, holder, renewed, ttl := int64(s.Generation), string(s.Holder.Marshal()), s.RenewedAt.Format(time.RFC3339Nano), int64(s.TTL)
	if expected == 0 {
		return r.q.insert, []any{key, gen, holder, s.Released, renewed, ttl, s.Broken, s.Value}
	}
	var parsed any // the holder, if it parses: a row holding it is checked by equality
	if r.parses(holder) {
		parsed = holder
	}
	return r.q.update, []any{key, int64(expected), gen, holder, s.Released, renewed, ttl, s.Broken, s.Value, parsed}
}

// parses reports whether platform.ParseIdentity accepts holder,
// remembering the last holder it accepted: a repository mostly writes the
// one of its own process.
func (r *Repository) parses(holder string) bool {
	if last := r.lastHolder.Load(); last != nil && *last == holder {
		return true
	}
	if _, err := platform.ParseIdentity([]byte(holder)); err != nil {
		return false
	}
	r.lastHolder.Store(&holder)
	return true
}

// settle finishes a save of s over expected whose statement wrote
// nothing, reading key's row: a row at another revision (or none) is a
// *store.RevisionConflictError, a row that Load refuses is its corrupt
// record error, left as it is. A valid row at the expected revision that
// the update's check did not recognise (written by another version, say)
// is checked again and written over in a transaction.
func (r *Repository) settle(ctx context.Context, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	rec, ok, err := r.read(ctx, r.pool, r.q.load, "save", key)
	if err != nil {
		return 0, err
	}
	if !ok || rec.Revision != expected {
		return 0, &store.RevisionConflictError{Key: key, Expected: expected, Actual: rec.Revision}
	}
	var (
		rev     store.Revision
		refused error
	)
	err = pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		var err error
		rev, refused, err = r.overwrite(ctx, tx, key, s, expected)
		return errors.Join(refused, err) // either rolls back: nothing is written
	})
	switch {
	case refused != nil:
		return 0, refused
	case err != nil:
		return 0, failOnce(ctx, "save", key, err)
	}
	return rev, nil
}

// overwrite writes s over expected in tx, after it locks and decodes
// key's row. refused is a conflict or a corrupt row, for which nothing is
// written; err is a failure of tx.
func (r *Repository) overwrite(ctx context.Context, tx pgx.Tx, key string, s store.Snapshot, expected store.Revision) (rev store.Revision, refused, err error) {
	rec, ok, err := r.read(ctx, tx, r.q.loadForUpdate, "save", key)
	switch {
	case errors.Is(err, store.ErrCorruptRecord):
		return 0, err, nil
	case err != nil:
		return 0, nil, err
	case !ok || rec.Revision != expected:
		return 0, &store.RevisionConflictError{Key: key, Expected: expected, Actual: rec.Revision}, nil
	}
	_, args := r.saveQuery(key, s, expected)
	var v int64
	if err := tx.QueryRow(ctx, r.q.overwrite, args[:overwriteParams]...).Scan(&v); err != nil {
		return 0, nil, err
	}
	return store.Revision(v), nil, nil
}

// failOnce is fail, for an error that may already be its result.
func failOnce(ctx context.Context, op, key string, err error) error {
	var re *store.RepositoryError
	if errors.As(err, &re) || ctx.Err() != nil && errors.Is(err, context.Cause(ctx)) {
		return err
	}
	return fail(ctx, op, key, err)
}

// SaveBatch runs the statements of all writes in one transaction, sent
// in one pipeline: a conflict, an invalid key or a corrupt row fails its
// write only, a storage failure rolls back and fails them all. A write
// over a valid row that its statement did not recognise is checked and
// written afterwards in the same transaction.
func (r *Repository) SaveBatch(ctx context.Context, writes []store.Write) ([]store.Revision, []error) {
	revs, errs := make([]store.Revision, len(writes)), make([]error, len(writes))
	if ctx.Err() != nil {
		check.Fill(errs, context.Cause(ctx))
		return revs, errs
	}
	var batch pgx.Batch
	var sent []int // the index of the write of each queued statement
	for i, w := range writes {
		if errs[i] = w.Validate(); errs[i] != nil {
			continue
		}
		query, args := r.saveQuery(w.Key, w.Snapshot, w.Expected)
		batch.Queue(query, args...)
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return revs, errs
	}
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		if err := r.runBatch(ctx, tx, &batch, sent, revs, errs); err != nil {
			return err
		}
		for _, i := range sent {
			if errs[i] != errNoRow {
				continue
			}
			var err error
			w := writes[i]
			if revs[i], errs[i], err = r.overwrite(ctx, tx, w.Key, w.Snapshot, w.Expected); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		clear(revs)
		check.Fill(errs, failOnce(ctx, "save batch", "", err))
	}
	for i, w := range writes {
		if errs[i] == nil && w.Snapshot.Released {
			r.notifyFreed(ctx, w.Key)
		}
	}
	return revs, errs
}

// errNoRow marks a write of a batch that wrote no row, until it is
// settled.
var errNoRow = errors.New("no row written")

// runBatch sends batch in tx and reads one result per statement into revs and
// errs (errNoRow for no row written). It returns a storage failure of the
// batch as a whole.
func (r *Repository) runBatch(ctx context.Context, tx pgx.Tx, batch *pgx.Batch, sent []int, revs []store.Revision, errs []error) error {
	br := tx.SendBatch(ctx, batch)
	for _, i := range sent {
		var rev int64
		err := br.QueryRow().Scan(&rev)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			errs[i] = errNoRow
		case err != nil:
			_ = br.Close()
			return fail(ctx, "save batch", "", err)
		default:
			revs[i] = store.Revision(rev)
		}
	}
	if err := br.Close(); err != nil {
		return fail(ctx, "save batch", "", err)
	}
	return nil
}

// Keys returns every key with a row, sorted by bytes.
func (r *Repository) Keys(ctx context.Context) ([]string, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	rows, err := r.pool.Query(ctx, r.q.keys)
	if err != nil {
		return nil, fail(ctx, "list", "", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fail(ctx, "list", "", err)
	}
	return keys, nil
}
