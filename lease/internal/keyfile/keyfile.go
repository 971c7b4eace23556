// Package keyfile keeps a lease key's files: their names, which any key
// can take, and their locks, exclusive across processes and goroutines.
// The file repository keeps its records, write locks and fences in them,
// the SQLite repository its fences: both import this package, and lease
// imports neither.
package keyfile

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rivus/collab/internal/keylock"
	"github.com/rivus/collab/lease/internal/check"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// Backoff between attempts at a file lock that another open file holds.
// The kernel cannot wake a waiter across processes without blocking a
// thread in flock(2), which a context could not interrupt, so waiters
// poll: quickly at first, for the short write locks, then at most every
// maxBackoff, which bounds how late a waiter notices a released fence.
const (
	minBackoff = time.Millisecond
	maxBackoff = 100 * time.Millisecond
)

// lockFile takes the exclusive lock on path, waiting on l's clock with
// backoff while another open file holds it, until ctx ends (then it
// returns context.Cause(ctx)). Any other failure is a
// *store.RepositoryError of l's op on key.
func (l *Locks) lockFile(ctx context.Context, path, key string) (platform.Unlocker, error) {
	wait := platform.Backoff{Clock: l.clock, First: minBackoff, Max: maxBackoff, Jitter: true}
	for {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		u, err := l.fs.TryLock(path)
		if err == nil {
			return u, nil
		}
		if !errors.Is(err, platform.ErrLocked) {
			return nil, &store.RepositoryError{Op: l.op, Key: key, Err: err}
		}
		if err := wait.Wait(ctx); err != nil {
			return nil, err
		}
	}
}

// Locks are per-key lock files under one directory, each named after its
// key (see Path) with one suffix, and exclusive across processes (the
// kernel's lock) and goroutines. Waiters of one Locks queue on an
// in-process lock first, so that they hand the lock over by channel and
// only one of them polls the file. The files are empty, and stay once
// created: removing a lock file that another process may be opening would
// let two processes hold "the" lock at once.
type Locks struct {
	fs     platform.FS
	clock  platform.Clock
	dir    string
	suffix string
	op     string
	local  keylock.Locks
}

// NewLocks returns the locks of the files with suffix in dir, on fsys,
// whose waiters back off on clock; their failures are *store.RepositoryError
// of op. It creates no directory.
func NewLocks(fsys platform.FS, clock platform.Clock, dir, suffix, op string) *Locks {
	return &Locks{fs: fsys, clock: clock, dir: dir, suffix: suffix, op: op}
}

// Lock checks key and ctx as every repository method does, then holds
// key's lock until the returned unlock (idempotent), waiting with backoff
// while another open file holds it. A ctx that ends returns
// context.Cause(ctx) and holds nothing.
func (l *Locks) Lock(ctx context.Context, key string) (func(), error) {
	if err := check.Call(ctx, key); err != nil {
		return nil, err
	}
	unlockLocal, err := l.local.Lock(ctx, key)
	if err != nil {
		return nil, err
	}
	path, nested := Path(l.dir, key, l.suffix)
	if nested {
		if err := l.fs.MkdirAll(filepath.Dir(path), DirPerm); err != nil {
			unlockLocal()
			return nil, &store.RepositoryError{Op: l.op, Key: key, Err: err}
		}
	}
	u, err := l.lockFile(ctx, path, key)
	if err != nil {
		unlockLocal()
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			// The file first, so that a local waiter finds it free.
			_ = u.Unlock() // closing a descriptor drops its lock even when close reports an error
			unlockLocal()
		})
	}, nil
}

// File permissions of everything the repositories create: private to the
// user, like the lock files of the platform.
const (
	DirPerm  = 0o700
	FilePerm = 0o600
)

// FenceSuffix ends the name of a fence file.
const FenceSuffix = ".fence"

// segmentLen is the longest path component a key's encoding takes;
// longer encodings continue in subdirectories. With a suffix and the
// platform's temporary-name decoration it stays below the 255 bytes that
// file systems allow in one name.
const segmentLen = 200

// MaxNesting is the most directories Path puts a file in below dir: a
// key's encoding is at most three bytes a byte of store.MaxKeyLen.
const MaxNesting = (3*store.MaxKeyLen - 1) / segmentLen

// Path returns the path under dir of key's file with suffix, and
// whether it lies in a subdirectory of dir (which then may need creating).
//
// The key is encoded byte by byte: 'a'-'z', '0'-'9' and '-' stand for
// themselves, every other byte is '_' and two lowercase hex digits. The
// encoding is reversible, uses only characters that every file system
// keeps apart (in lower case, for the case-insensitive ones), and never
// yields ".", ".." or a name beginning with a dot. An encoding longer than
// segmentLen is cut into directories of segmentLen characters; directory
// names hold no '.', so they never clash with a file's name.
func Path(dir, key, suffix string) (path string, nested bool) {
	enc := encodeKey(key)
	parts := []string{dir}
	for len(enc) > segmentLen {
		parts = append(parts, enc[:segmentLen])
		enc = enc[segmentLen:]
		nested = true
	}
	parts = append(parts, enc+suffix)
	return filepath.Join(parts...), nested
}

const hexDigits = "0123456789abcdef"

func encodeKey(key string) string {
	var b strings.Builder
	b.Grow(len(key))
	for i := 0; i < len(key); i++ {
		c := key[i]
		if plainByte(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('_')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xf])
	}
	return b.String()
}

func plainByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-'
}

// DecodePath returns the key whose file with suffix is rel, a path
// relative to the directory holding such files. It is the inverse of
// Path and accepts only what Path produces.
func DecodePath(rel, suffix string) (string, error) {
	name, ok := strings.CutSuffix(filepath.ToSlash(rel), suffix)
	if !ok {
		return "", fmt.Errorf("%q does not end in %q", rel, suffix)
	}
	enc := strings.ReplaceAll(name, "/", "")
	var b strings.Builder
	for i := 0; i < len(enc); i++ {
		c := enc[i]
		if c != '_' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(enc) {
			return "", fmt.Errorf("%q: escape cut short", rel)
		}
		hi, lo := strings.IndexByte(hexDigits, enc[i+1]), strings.IndexByte(hexDigits, enc[i+2])
		if hi < 0 || lo < 0 {
			return "", fmt.Errorf("%q: bad escape %q", rel, enc[i:i+3])
		}
		b.WriteByte(byte(hi<<4 | lo))
		i += 2
	}
	key := b.String()
	if err := store.ValidateKey(key); err != nil {
		return "", err
	}
	// Only the canonical form decodes: one key, one file.
	if want, _ := Path("", key, suffix); filepath.ToSlash(want) != filepath.ToSlash(rel) {
		return "", fmt.Errorf("%q is not the canonical name of key %q", rel, key)
	}
	return key, nil
}
