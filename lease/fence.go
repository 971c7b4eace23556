package lease

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rivus/collab/internal/keylock"
	"github.com/rivus/collab/lease/internal/check"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
)

// keyLocks is a set of per-key mutexes whose waits end with a context.
type keyLocks = keylock.Locks

// Backoff between attempts at a file lock that another open file holds.
// The kernel cannot wake a waiter across processes without blocking a
// thread in flock(2), which a context could not interrupt, so waiters
// poll: quickly at first, for the short write locks, then at most every
// maxBackoff, which bounds how late a waiter notices a released fence.
const (
	minBackoff = time.Millisecond
	maxBackoff = 100 * time.Millisecond
)

// lockFile takes the exclusive lock on path, waiting on clock with
// backoff while another open file holds it, until ctx ends (then it
// returns context.Cause(ctx)). Any other failure is a *store.RepositoryError
// of op on key.
func lockFile(ctx context.Context, fsys platform.FS, clock platform.Clock, path, op, key string) (platform.Unlocker, error) {
	var timer platform.Timer
	delay := minBackoff
	for {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		u, err := fsys.TryLock(path)
		if err == nil {
			return u, nil
		}
		if !errors.Is(err, platform.ErrLocked) {
			return nil, &store.RepositoryError{Op: op, Key: key, Err: err}
		}
		if timer == nil {
			timer = clock.NewTimer(jitter(delay))
		} else {
			timer.Reset(jitter(delay))
		}
		select {
		case <-timer.C():
		case <-ctx.Done():
			timer.Stop()
			return nil, context.Cause(ctx)
		}
		delay = min(2*delay, maxBackoff)
	}
}

// jitter returns a duration between d/2 and d, so that waiters of several
// processes do not retry in step.
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// fileFences are per-key fences of lock files under one directory,
// exclusive across processes (the kernel's lock) and goroutines. Waiters
// of one repository queue on an in-process lock first, so that they hand
// the fence over by channel and only one of them polls the file.
type fileFences struct {
	fs    platform.FS
	clock platform.Clock
	dir   string
	local keyLocks
}

// fence holds key's fence until the returned unlock (idempotent).
func (f *fileFences) fence(ctx context.Context, key string) (func(), error) {
	if err := check.Call(ctx, key); err != nil {
		return nil, err
	}
	return lockKeyFile(ctx, f.fs, f.clock, &f.local, f.dir, fenceSuffix, "fence", key)
}

// lockKeyFile holds key in local, then its lock file under dir, and
// returns the idempotent unlock of both.
func lockKeyFile(ctx context.Context, fsys platform.FS, clock platform.Clock, local *keyLocks, dir, suffix, op, key string) (func(), error) {
	unlockLocal, err := local.Lock(ctx, key)
	if err != nil {
		return nil, err
	}
	path, nested := keyPath(dir, key, suffix)
	if nested {
		if err := fsys.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
			unlockLocal()
			return nil, &store.RepositoryError{Op: op, Key: key, Err: err}
		}
	}
	u, err := lockFile(ctx, fsys, clock, path, op, key)
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
	dirPerm  = 0o700
	filePerm = 0o600
)

// Suffixes of the files named after a key.
const (
	recordSuffix = ".json"
	lockSuffix   = ".lock"
	fenceSuffix  = ".fence"
)

// segmentLen is the longest path component a key's encoding takes;
// longer encodings continue in subdirectories. With a suffix and the
// platform's temporary-name decoration it stays below the 255 bytes that
// file systems allow in one name.
const segmentLen = 200

// keyPath returns the path under dir of key's file with suffix, and
// whether it lies in a subdirectory of dir (which then may need creating).
//
// The key is encoded byte by byte: 'a'-'z', '0'-'9' and '-' stand for
// themselves, every other byte is '_' and two lowercase hex digits. The
// encoding is reversible, uses only characters that every file system
// keeps apart (in lower case, for the case-insensitive ones), and never
// yields ".", ".." or a name beginning with a dot. An encoding longer than
// segmentLen is cut into directories of segmentLen characters; directory
// names hold no '.', so they never clash with a file's name.
func keyPath(dir, key, suffix string) (path string, nested bool) {
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

// decodeKeyPath returns the key whose file with suffix is rel, a path
// relative to the directory holding such files. It is the inverse of
// keyPath and accepts only what keyPath produces.
func decodeKeyPath(rel, suffix string) (string, error) {
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
	if want, _ := keyPath("", key, suffix); filepath.ToSlash(want) != filepath.ToSlash(rel) {
		return "", fmt.Errorf("%q is not the canonical name of key %q", rel, key)
	}
	return key, nil
}
