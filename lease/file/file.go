package file

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rivus/collab/internal/jsontail"
	"github.com/rivus/collab/lease/internal/check"
	"github.com/rivus/collab/lease/internal/keyfile"
	"github.com/rivus/collab/lease/internal/quote"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// Repository keeps one JSON file per key in a directory. Its fences and
// write locks are lock files, so they exclude other processes too. See
// the package documentation for the layout.
type Repository struct {
	fs     platform.FS
	dir    string         // the records
	locks  *keyfile.Locks // the per-key write locks
	fences *keyfile.Locks
	wakes  *keyfile.Wakes // in the fences' directory; nil when read-only
}

var (
	_ store.Repository = (*Repository)(nil)
	_ store.Lister     = (*Repository)(nil)
)

// Subdirectories of a file repository's directory. Their dots keep them
// apart from the records, whose names never begin with one.
const (
	locksDirName  = ".locks"
	fencesDirName = ".fences"
)

// Suffixes of the files named after a key: records and write locks.
const (
	recordSuffix = ".json"
	lockSuffix   = ".lock"
)

// fileFormat is the version of the record file's layout.
const fileFormat = 1

// fileRecord is the content of a record file.
type fileRecord struct {
	Format   int             `json:"format"`
	Key      string          `json:"key"`
	Revision store.Revision  `json:"revision"`
	Lease    *store.Snapshot `json:"lease"`
}

// Open opens the repository in dir on p, creating the directory and its
// lock directories if missing. A nil p is platform.OS(); a p without FS
// is a *store.RepositoryError. The directories must be ones this user can
// trust (platform.TrustedDir): a link, a directory another user owns, or
// one others may write in without the sticky bit fails Open with a
// *platform.UntrustedDirError; so does one below a directory that another
// user owns or may write in without the sticky bit, or below a link that
// another user owns or could replace (platform.TrustedPath). The
// repository uses dir with the links above it resolved at Open.
func Open(p *platform.Platform, dir string) (*Repository, error) {
	if p == nil {
		p = platform.OS()
	}
	if p.FS == nil {
		return nil, &store.RepositoryError{Op: "open", Err: errors.New("the platform has no file system")}
	}
	// Nothing is created where another user could have moved a directory
	// in the way: the nearest directory that exists must be trusted first.
	// The links above dir are resolved once, here: one that another user
	// points elsewhere later is not followed.
	dir, err := platform.TrustedToCreate(p.FS, dir)
	if err != nil {
		return nil, &store.RepositoryError{Op: "open", Err: err}
	}
	locksDir, fencesDir := filepath.Join(dir, locksDirName), filepath.Join(dir, fencesDirName)
	for _, d := range []string{dir, locksDir, fencesDir} {
		if err := p.FS.MkdirAll(d, keyfile.DirPerm); err != nil {
			return nil, &store.RepositoryError{Op: "open", Err: err}
		}
		// Another user who owns or can write in them could plant links
		// that this process would follow, or forge and delete records.
		if err := platform.TrustedDir(p.FS, d); err != nil {
			return nil, &store.RepositoryError{Op: "open", Err: err}
		}
	}
	clock := p.GetClock()
	return &Repository{
		fs:     p.FS,
		dir:    dir,
		locks:  keyfile.NewLocks(p.FS, clock, locksDir, lockSuffix, "save"),
		fences: keyfile.NewLocks(p.FS, clock, fencesDir, keyfile.FenceSuffix, "fence"),
		wakes:  keyfile.NewWakes(p.FS, fencesDir),
	}, nil
}

// OpenReadOnly opens the existing repository in dir on p for reading:
// it creates nothing, neither dir nor its lock directories, so that a look
// at a mistyped path leaves no directory behind. dir must exist and be
// one this user can trust, as for Open. Save and Fence on it fail where
// the lock directories are missing.
func OpenReadOnly(p *platform.Platform, dir string) (*Repository, error) {
	if p == nil {
		p = platform.OS()
	}
	if p.FS == nil {
		return nil, &store.RepositoryError{Op: "open", Err: errors.New("the platform has no file system")}
	}
	dir, err := platform.TrustedPath(p.FS, dir)
	if err != nil {
		return nil, &store.RepositoryError{Op: "open", Err: err}
	}
	st, err := p.FS.Stat(dir)
	switch {
	case err != nil:
		return nil, &store.RepositoryError{Op: "open", Err: err}
	case !st.IsDir():
		return nil, &store.RepositoryError{Op: "open", Err: &fs.PathError{Op: "open", Path: dir, Err: errors.New("not a directory")}}
	}
	if err := platform.TrustedDir(p.FS, dir); err != nil {
		return nil, &store.RepositoryError{Op: "open", Err: err}
	}
	clock := p.GetClock()
	return &Repository{
		fs:     p.FS,
		dir:    dir,
		locks:  keyfile.NewLocks(p.FS, clock, filepath.Join(dir, locksDirName), lockSuffix, "save"),
		fences: keyfile.NewLocks(p.FS, clock, filepath.Join(dir, fencesDirName), keyfile.FenceSuffix, "fence"),
	}, nil
}

// Load reads key's record file. It takes no lock: files are replaced by
// rename, so a reader sees a whole old or a whole new record.
func (r *Repository) Load(ctx context.Context, key string) (store.Record, bool, error) {
	if err := check.Call(ctx, key); err != nil {
		return store.Record{}, false, err
	}
	path, _ := keyfile.Path(r.dir, key, recordSuffix)
	return r.read("load", key, path)
}

// Save compares and writes under key's lock file: it reads the record,
// compares its revision, and replaces the file atomically.
func (r *Repository) Save(ctx context.Context, key string, s store.Snapshot, expected store.Revision) (store.Revision, error) {
	if err := check.Save(ctx, key, s); err != nil {
		return 0, err
	}
	unlock, err := r.locks.Lock(ctx, key)
	if err != nil {
		return 0, err
	}
	defer unlock()
	path, nested := keyfile.Path(r.dir, key, recordSuffix)
	cur, ok, err := r.read("save", key, path)
	if err != nil {
		return 0, err
	}
	if cur.Revision != expected {
		return 0, &store.RevisionConflictError{Key: key, Expected: expected, Actual: cur.Revision}
	}
	next := cur.Revision + 1
	data, err := encodeFileRecord(key, next, s)
	if err != nil {
		return 0, &store.RepositoryError{Op: "save", Key: key, Err: err}
	}
	if nested && !ok {
		if err := r.fs.MkdirAll(filepath.Dir(path), keyfile.DirPerm); err != nil {
			return 0, &store.RepositoryError{Op: "save", Key: key, Err: err}
		}
		// Judged as made: another user may have made it first.
		if err := r.checkNested("save", key, path); err != nil {
			return 0, err
		}
	}
	if err := r.fs.WriteFileAtomic(path, data, keyfile.FilePerm); err != nil {
		return 0, &store.RepositoryError{Op: "save", Key: key, Err: err}
	}
	if s.Released {
		r.wakes.Freed(key)
	}
	return next, nil
}

// WatchFreed wakes freed after each tombstone of key saved by any
// process of this host, through key's wake file in the fences'
// directory (on Linux; elsewhere, and on a repository opened read-only,
// which creates nothing, it fails, and waiters poll).
func (r *Repository) WatchFreed(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return r.wakes.WatchFreed(ctx, key)
}

var _ store.Watcher = (*Repository)(nil)

// Fence holds key's fence file until unlock.
func (r *Repository) Fence(ctx context.Context, key string) (func(), error) {
	return r.fences.Lock(ctx, key)
}

// Keys returns the key of every record file, sorted. Names that no key
// encodes to (a person's stray file) are skipped, not fatal.
func (r *Repository) Keys(ctx context.Context) ([]string, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	var keys []string
	err := r.walk(r.dir, func(rel string) {
		if k, err := keyfile.DecodePath(rel, recordSuffix); err == nil {
			keys = append(keys, k)
		}
	})
	if err != nil {
		return nil, &store.RepositoryError{Op: "list", Err: err}
	}
	slices.Sort(keys)
	return keys, nil
}

// walk calls found with the path, relative to root, of every record file
// under root, skipping the lock directories, and directories no key is
// nested in: deeper than keyfile.MaxNesting, or not this user's to trust
// (planted by another user, who could make a chain deeper than PATH_MAX).
func (r *Repository) walk(root string, found func(rel string)) error {
	var visit func(dir string, depth int) error
	visit = func(dir string, depth int) error {
		entries, err := r.fs.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := filepath.Join(dir, e.Name())
			switch {
			case strings.HasPrefix(e.Name(), "."):
			case e.IsDir():
				if depth >= keyfile.MaxNesting || platform.TrustedDir(r.fs, name) != nil {
					continue
				}
				if err := visit(name, depth+1); err != nil {
					return err
				}
			case e.Type()&fs.ModeType == 0 && strings.HasSuffix(e.Name(), recordSuffix):
				rel, err := filepath.Rel(root, name)
				if err != nil {
					return err
				}
				found(rel)
			}
		}
		return nil
	}
	return visit(root, 0)
}

// maxRecordFile bounds a record file: a record holds one identity stamp
// (at most platform.MaxIdentityJSON bytes) and a few numbers, so anything
// longer is not a record, and is not read whole.
const maxRecordFile = 4 * platform.MaxIdentityJSON

// checkNested refuses the directories a long key's record is nested in
// (keyfile.Path) unless this user can trust them: in a sticky store
// directory another user may make one first, or plant a link there. A
// missing one is fine.
func (r *Repository) checkNested(op, key, path string) error {
	for d := filepath.Dir(path); len(d) > len(r.dir); d = filepath.Dir(d) {
		if err := platform.TrustedDir(r.fs, d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return &store.RepositoryError{Op: op, Key: key, Err: err}
		}
	}
	return nil
}

// read returns the record in path; a missing file is no record.
func (r *Repository) read(op, key, path string) (store.Record, bool, error) {
	if err := r.checkNested(op, key, path); err != nil {
		return store.Record{}, false, err
	}
	data, err := r.fs.ReadOwnFile(path, maxRecordFile)
	if errors.Is(err, fs.ErrNotExist) {
		return store.Record{}, false, nil
	}
	if errors.Is(err, platform.ErrNotRegular) || errors.Is(err, platform.ErrSymlink) || errors.Is(err, platform.ErrTooLarge) ||
		errors.Is(err, platform.ErrNotOwned) || errors.Is(err, platform.ErrLinked) {
		// Not a record of ours: something planted in the store (another
		// user's file, a link, a FIFO), read no further and trusted in
		// nothing.
		return store.Record{}, false, &store.RepositoryError{Op: op, Key: key, Err: &store.CorruptRecordError{Key: key, Where: path, Err: err}}
	}
	if err != nil {
		return store.Record{}, false, &store.RepositoryError{Op: op, Key: key, Err: err}
	}
	rec, err := decodeFileRecord(data, key)
	if err != nil {
		return store.Record{}, false, &store.RepositoryError{Op: op, Key: key, Err: &store.CorruptRecordError{Key: key, Where: path, Err: err}}
	}
	return rec, true, nil
}

func encodeFileRecord(key string, rev store.Revision, s store.Snapshot) ([]byte, error) {
	data, err := json.MarshalIndent(fileRecord{Format: fileFormat, Key: key, Revision: rev, Lease: &s}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// decodeFileRecord decodes a record file that should hold key. Unknown
// fields are ignored, so that newer writers of the same format stay
// readable.
func decodeFileRecord(data []byte, key string) (store.Record, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var f fileRecord
	if err := dec.Decode(&f); err != nil {
		if fe, ok := errors.AsType[*store.SnapshotFieldError](err); ok {
			return store.Record{}, fmt.Errorf("lease.%w", fe)
		}
		return store.Record{}, fmt.Errorf("not a JSON record: %w", err)
	}
	if jsontail.Trailing(dec, data) {
		return store.Record{}, errors.New("trailing data after the record")
	}
	switch {
	case f.Format != fileFormat:
		return store.Record{}, fmt.Errorf("format %d is not supported (this version reads format %d)", f.Format, fileFormat)
	case f.Key != key:
		return store.Record{}, fmt.Errorf("the file holds key %s", quote.Key(f.Key))
	case f.Revision == 0:
		return store.Record{}, errors.New("revision missing")
	case f.Lease == nil:
		return store.Record{}, errors.New("lease missing")
	}
	return store.Record{Snapshot: *f.Lease, Revision: f.Revision}, nil
}
