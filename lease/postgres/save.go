package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rivus/collab/lease"
)

// Load reads key's row.
func (r *Repository) Load(ctx context.Context, key string) (lease.Record, bool, error) {
	if err := begin(ctx, key); err != nil {
		return lease.Record{}, false, err
	}
	var row storedRow
	err := r.pool.QueryRow(ctx, r.q.load, key).Scan(&row.revision, &row.generation, &row.holder, &row.released, &row.renewedAt, &row.ttl)
	if errors.Is(err, pgx.ErrNoRows) {
		return lease.Record{}, false, nil
	}
	if err != nil {
		return lease.Record{}, false, fail(ctx, "load", key, err)
	}
	rec, err := row.decode()
	if err != nil {
		return lease.Record{}, false, &lease.RepositoryError{Op: "load", Key: key, Err: &lease.CorruptRecordError{Key: key, Where: r.where, Err: err}}
	}
	return rec, true, nil
}

// Save writes s over expected in one conditional statement; when it
// writes nothing, a second statement reads the revision that conflicted.
func (r *Repository) Save(ctx context.Context, key string, s lease.Snapshot, expected lease.Revision) (lease.Revision, error) {
	if err := begin(ctx, key); err != nil {
		return 0, err
	}
	query, args := r.saveQuery(key, s, expected)
	var rev int64
	err := r.pool.QueryRow(ctx, query, args...).Scan(&rev)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, r.conflict(ctx, key, expected)
	}
	if err != nil {
		return 0, fail(ctx, "save", key, err)
	}
	return lease.Revision(rev), nil
}

// saveQuery returns the statement that writes s over expected, and its
// arguments. A generation above the int64 range is stored as its two's
// complement bits, which read back as the same Token; a revision that
// large matches no row.
func (r *Repository) saveQuery(key string, s lease.Snapshot, expected lease.Revision) (string, []any) {
	gen, holder, renewed, ttl := int64(s.Generation), string(s.Holder.Marshal()), s.RenewedAt.Format(time.RFC3339Nano), int64(s.TTL)
	if expected == 0 {
		return r.q.insert, []any{key, gen, holder, s.Released, renewed, ttl}
	}
	return r.q.update, []any{key, int64(expected), gen, holder, s.Released, renewed, ttl}
}

// conflict reads key's stored revision after a save over expected wrote
// nothing, and returns the *lease.RevisionConflictError.
func (r *Repository) conflict(ctx context.Context, key string, expected lease.Revision) error {
	var actual int64
	err := r.pool.QueryRow(ctx, r.q.revision, key).Scan(&actual)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fail(ctx, "save", key, err)
	}
	return &lease.RevisionConflictError{Key: key, Expected: expected, Actual: lease.Revision(actual)}
}

// SaveBatch sends the statements of all writes in one pipeline, which
// the server runs as one implicit transaction: a conflict or invalid key
// fails its write only, a storage failure rolls back and fails them all.
// The revisions of conflicting keys are read afterwards.
func (r *Repository) SaveBatch(ctx context.Context, writes []lease.Write) ([]lease.Revision, []error) {
	revs, errs := make([]lease.Revision, len(writes)), make([]error, len(writes))
	if ctx.Err() != nil {
		fill(errs, context.Cause(ctx))
		return revs, errs
	}
	var batch pgx.Batch
	var sent []int // the index of the write of each queued statement
	for i, w := range writes {
		if errs[i] = lease.ValidateKey(w.Key); errs[i] != nil {
			continue
		}
		query, args := r.saveQuery(w.Key, w.Snapshot, w.Expected)
		batch.Queue(query, args...)
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return revs, errs
	}
	if err := r.runBatch(ctx, &batch, sent, revs, errs); err != nil {
		clear(revs)
		fill(errs, err)
		return revs, errs
	}
	for _, i := range sent {
		if errs[i] != nil { // no row written: a conflict
			errs[i] = r.conflict(ctx, writes[i].Key, writes[i].Expected)
		}
	}
	return revs, errs
}

// errNoRow marks a write of a batch that wrote no row, until its
// conflict is read.
var errNoRow = errors.New("no row written")

// runBatch sends batch and reads one result per statement into revs and
// errs (errNoRow for a conflict). It returns a storage failure of the
// batch as a whole.
func (r *Repository) runBatch(ctx context.Context, batch *pgx.Batch, sent []int, revs []lease.Revision, errs []error) error {
	br := r.pool.SendBatch(ctx, batch)
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
			revs[i] = lease.Revision(rev)
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

// begin checks what every method checks first: the key, then the
// context.
func begin(ctx context.Context, key string) error {
	if err := lease.ValidateKey(key); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

func fill(errs []error, err error) {
	for i := range errs {
		errs[i] = err
	}
}
