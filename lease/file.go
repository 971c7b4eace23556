package lease

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/rivus/collab/platform"
)

// FileRepository keeps one JSON file per key in a directory: the fallback
// for hosts without SQLite. Its fences and write locks are lock files, so
// they exclude other processes too. See the package documentation for the
// layout.
type FileRepository struct {
	fs       platform.FS
	clock    platform.Clock
	dir      string   // the records
	locksDir string   // the per-key write locks
	locks    keyLocks // in-process queue in front of the write locks
	fences   fileFences
}

var _ Repository = (*FileRepository)(nil)

// Subdirectories of a file repository's directory. Their dots keep them
// apart from the records, whose names never begin with one.
const (
	locksDirName  = ".locks"
	fencesDirName = ".fences"
)

// fileFormat is the version of the record file's layout.
const fileFormat = 1

// fileRecord is the content of a record file.
type fileRecord struct {
	Format   int       `json:"format"`
	Key      string    `json:"key"`
	Revision Revision  `json:"revision"`
	Lease    *Snapshot `json:"lease"`
}

// OpenFileRepository opens the repository in dir, creating the directory
// and its lock directories if missing.
func OpenFileRepository(p *platform.Platform, dir string) (*FileRepository, error) {
	if p == nil || p.FS == nil {
		return nil, &RepositoryError{Op: "open", Err: errors.New("the platform has no file system")}
	}
	r := &FileRepository{
		fs:       p.FS,
		clock:    p.GetClock(),
		dir:      dir,
		locksDir: filepath.Join(dir, locksDirName),
	}
	r.fences = fileFences{fs: p.FS, clock: r.clock, dir: filepath.Join(dir, fencesDirName)}
	for _, d := range []string{dir, r.locksDir, r.fences.dir} {
		if err := p.FS.MkdirAll(d, dirPerm); err != nil {
			return nil, &RepositoryError{Op: "open", Err: err}
		}
	}
	return r, nil
}

// Load reads key's record file. It takes no lock: files are replaced by
// rename, so a reader sees a whole old or a whole new record.
func (r *FileRepository) Load(ctx context.Context, key string) (Record, bool, error) {
	if err := begin(ctx, key); err != nil {
		return Record{}, false, err
	}
	path, _ := keyPath(r.dir, key, recordSuffix)
	return r.read("load", key, path)
}

// Save compares and writes under key's lock file: it reads the record,
// compares its revision, and replaces the file atomically.
func (r *FileRepository) Save(ctx context.Context, key string, s Snapshot, expected Revision) (Revision, error) {
	if err := beginSave(ctx, key, s); err != nil {
		return 0, err
	}
	unlock, err := lockKeyFile(ctx, r.fs, r.clock, &r.locks, r.locksDir, lockSuffix, "save", key)
	if err != nil {
		return 0, err
	}
	defer unlock()
	path, nested := keyPath(r.dir, key, recordSuffix)
	cur, ok, err := r.read("save", key, path)
	if err != nil {
		return 0, err
	}
	if cur.Revision != expected {
		return 0, &RevisionConflictError{Key: key, Expected: expected, Actual: cur.Revision}
	}
	next := cur.Revision + 1
	data, err := encodeFileRecord(key, next, s)
	if err != nil {
		return 0, &RepositoryError{Op: "save", Key: key, Err: err}
	}
	if nested && !ok {
		if err := r.fs.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
			return 0, &RepositoryError{Op: "save", Key: key, Err: err}
		}
	}
	if err := r.fs.WriteFileAtomic(path, data, filePerm); err != nil {
		return 0, &RepositoryError{Op: "save", Key: key, Err: err}
	}
	return next, nil
}

// Fence holds key's fence file until unlock.
func (r *FileRepository) Fence(ctx context.Context, key string) (func(), error) {
	return r.fences.fence(ctx, key)
}

// read returns the record in path; a missing file is no record.
func (r *FileRepository) read(op, key, path string) (Record, bool, error) {
	data, err := r.fs.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, &RepositoryError{Op: op, Key: key, Err: err}
	}
	rec, err := decodeFileRecord(data, key)
	if err != nil {
		return Record{}, false, &RepositoryError{Op: op, Key: key, Err: &CorruptRecordError{Key: key, Where: path, Err: err}}
	}
	return rec, true, nil
}

func encodeFileRecord(key string, rev Revision, s Snapshot) ([]byte, error) {
	data, err := json.MarshalIndent(fileRecord{Format: fileFormat, Key: key, Revision: rev, Lease: &s}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// decodeFileRecord decodes a record file that should hold key. Unknown
// fields are ignored, so that newer writers of the same format stay
// readable.
func decodeFileRecord(data []byte, key string) (Record, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var f fileRecord
	if err := dec.Decode(&f); err != nil {
		if fe, ok := errors.AsType[*SnapshotFieldError](err); ok {
			return Record{}, fmt.Errorf("lease.%w", fe)
		}
		return Record{}, fmt.Errorf("not a JSON record: %w", err)
	}
	if dec.More() {
		return Record{}, errors.New("trailing data after the record")
	}
	switch {
	case f.Format != fileFormat:
		return Record{}, fmt.Errorf("format %d is not supported (this version reads format %d)", f.Format, fileFormat)
	case f.Key != key:
		return Record{}, fmt.Errorf("the file holds key %s", quoteKey(f.Key))
	case f.Revision == 0:
		return Record{}, errors.New("revision missing")
	case f.Lease == nil:
		return Record{}, errors.New("lease missing")
	}
	return Record{Snapshot: *f.Lease, Revision: f.Revision}, nil
}
