package sqlitelock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/rivus/collab/internal/lockbackend"
	"github.com/rivus/collab/platform"
)

// sqliteBackend is the lock on a platform with SQLite: a database held
// with locking_mode=EXCLUSIVE on one pinned connection. The kernel drops
// its POSIX locks when the holder dies, so nothing is ever reclaimed.
type sqliteBackend struct {
	p    *platform.Platform
	path string
	// busyPath reports whether a task of this process holds or takes the
	// lock at a path (plock's turns): the probe's descriptors of such a
	// path stay open (probeFile).
	busyPath func(string) bool
}

// The statement of an attempt. BEGIN EXCLUSIVE takes SQLite's exclusive
// lock at once (rollback journal), and the transaction stays open while
// the lock is held: nothing is written, so nothing is synced. Nothing in
// the lock database must survive a crash: the lock is the kernel's, which
// drops it when the holder's connection closes or its process dies.
// Holders of earlier versions wrote a row and committed under
// locking_mode=EXCLUSIVE, which keeps the same lock: both exclude each
// other.
var takeStatements = []string{"BEGIN EXCLUSIVE"}

// initStatements give a new, empty lock database its first page, once, in
// the attempt that first holds it: a write transaction on an empty
// database writes that page (a journal and three fsyncs) whether or not
// it changes anything, at every acquisition. COMMIT under
// locking_mode=EXCLUSIVE keeps the lock; BEGIN EXCLUSIVE holds it on.
var initStatements = []string{
	"CREATE TABLE IF NOT EXISTS collab_lock (id INTEGER PRIMARY KEY CHECK (id = 1))",
	"COMMIT",
	"BEGIN EXCLUSIVE",
}

// sqliteInstead is the alternative to a SQLite lock in a shared
// directory.
const sqliteInstead = "take the lock in its lock-file mode (a platform without SQLite; collab lock --lock-file), as every user of the lock must then"

// TestHookTry, set only by tests, hears each try at the lock past
// the checks of its files, with its busy timeout, and whether the kernel
// refused it (no SQLite opened) or SQLite answers: how a test tells an
// answer from the kernel's lock table from one that waited in SQLite.
var TestHookTry func(busy time.Duration, kernelRefused bool)

// kernelKnows reports whether the kernel's lock table answers for p's
// SQLite locks: p is the operating system's files with modernc.org/sqlite,
// whose unix VFS (os_unix.c) takes POSIX locks on SQLite's lock bytes, or
// with KernelLocks, which takes them itself.
func kernelKnows(p *platform.Platform) bool {
	if !probeSupported || p.FS != platform.OSFS() {
		return false
	}
	modernc := osSQLite()
	return p.SQLite == KernelLocks || modernc != nil && p.SQLite == modernc
}

// sqliteHeld is a taken SQLite lock.
type sqliteHeld struct {
	// unlock drops the lock: it closes the connection and its database,
	// or the descriptor that holds the lock bytes (KernelLocks).
	unlock func() error
	holder string // the .holder file this process wrote, or ""
	fsys   platform.FS
}

// Attempt makes one attempt at the lock, waiting at most busy for a
// connection that holds it briefly (IsHeld's shared lock). It returns a
// *busyError, with the holder's stamp if readable, when another connection
// holds it: at once, without opening SQLite, where the kernel names
// another process's write lock (a *writeLockedError). self may be nil:
// the SQLite lock needs no identity.
func (b *sqliteBackend) Attempt(ctx context.Context, self *platform.Identity, busy time.Duration) (lockbackend.Held, error) {
	// SQLite opens the journal by name: only in a directory where nobody
	// else can plant one, checked with the database before each open.
	if err := platform.SQLiteDir(b.p.FS, filepath.Dir(b.path), sqliteInstead); err != nil {
		return nil, fmt.Errorf("plock: SQLite lock %s: %w", b.path, err)
	}
	if err := platform.SQLiteFiles(b.p.FS, b.path); err != nil {
		return nil, fmt.Errorf("plock: SQLite lock %s: %w", b.path, err)
	}
	locked, pid := false, 0
	if kernelKnows(b.p) {
		locked, pid = sqliteWriteLocked(b.path, b.busyPath)
	}
	if TestHookTry != nil {
		TestHookTry(busy, locked)
	}
	if locked {
		// Another process holds the lock or is taking it: refused now, as
		// SQLite would after its busy wait, which is for a check only. A
		// stamp that names another process than the kernel does (stale,
		// or planted) is not the holder.
		holder := lockbackend.ReadHolder(b.p.FS, b.path+lockbackend.HolderSuffix)
		if lockbackend.StampMismatch(b.p, holder, pid) {
			holder = nil
		}
		return nil, &lockbackend.WriteLockedError{Busy: &lockbackend.BusyError{Holder: holder, PID: pid}}
	}
	// The lock database is private (0600): a user who could read it could
	// hold a read transaction open and keep every holder out. Created
	// here, before SQLite opens it, with that mode; its journal takes the
	// same. Other users learn who holds the lock from the .holder stamp.
	st, err := b.p.FS.Lstat(b.path)
	empty := err != nil || st.Size() == 0
	if errors.Is(err, fs.ErrNotExist) {
		if err := b.p.FS.CreateExclusive(b.path, nil, 0o600); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("plock: create SQLite lock %s: %w", b.path, err)
		}
	}
	if b.p.SQLite == KernelLocks && kernelKnows(b.p) {
		return b.attemptLockBytes(ctx, self, busy)
	}
	db, err := b.p.SQLite.Open(b.path, platform.SQLiteOptions{ExclusiveLocking: true, BusyTimeout: busy})
	if err != nil {
		return nil, err
	}
	// The pool must never close the connection that holds the lock, nor
	// open a second one on the file.
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	stmts := takeStatements
	if empty {
		stmts = append(stmts[:len(stmts):len(stmts)], initStatements...)
	}
	for _, stmt := range stmts {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			cerr := errors.Join(conn.Close(), db.Close())
			if code := platform.SQLiteCode(err); code == platform.SQLiteBusy || code == platform.SQLiteLocked {
				return nil, &lockbackend.BusyError{Holder: lockbackend.ReadHolder(b.p.FS, b.path+lockbackend.HolderSuffix)}
			}
			return nil, errors.Join(fmt.Errorf("plock: take SQLite lock %s: %w", b.path, err), cerr)
		}
	}
	h := &sqliteHeld{unlock: func() error { return errors.Join(conn.Close(), db.Close()) }, fsys: b.p.FS}
	h.stamp(b.path+lockbackend.HolderSuffix, self)
	return h, nil
}

// attemptLockBytes is attempt through the kernel alone
// (KernelLocks): takeLockBytes, then the stamp.
func (b *sqliteBackend) attemptLockBytes(ctx context.Context, self *platform.Identity, busy time.Duration) (lockbackend.Held, error) {
	f, err := takeLockBytes(ctx, b.p.GetClock(), b.path, busy)
	var be *lockbackend.BusyError
	if errors.As(err, &be) {
		be.Holder = lockbackend.ReadHolder(b.p.FS, b.path+lockbackend.HolderSuffix)
		if lockbackend.StampMismatch(b.p, be.Holder, be.PID) {
			be.Holder = nil
		}
	}
	if err != nil {
		if be == nil && ctx.Err() == nil {
			err = fmt.Errorf("plock: take SQLite lock %s: %w", b.path, err)
		}
		return nil, err
	}
	h := &sqliteHeld{unlock: f.Close, fsys: b.p.FS}
	h.stamp(b.path+lockbackend.HolderSuffix, self)
	return h, nil
}

// NeedsIdentity: the kernel judges SQLite's holders; the stamp is only
// for diagnostics.
func (b *sqliteBackend) NeedsIdentity() bool { return false }

// stamp writes the holder's identity beside the lock, for diagnostics; a
// holder that cannot read its own identity removes a stale stamp instead.
// Diagnostics need no durability: the stamp is replaced without syncing.
// The lock keeps other writers out; a reader may briefly find none. A
// stamp that cannot be written never costs the lock, which is held: what
// cannot be removed or created (another user's stamp in a sticky
// directory such as /tmp, a directory of that name, a name another user
// takes again at once) leaves the lock without a stamp of its own, and
// readers may meet a stale or planted one, which Inspect tells from the
// holder the kernel names where it can.
func (h *sqliteHeld) stamp(name string, self *platform.Identity) {
	if self != nil {
		// Released locks leave no stamp: try the create first.
		err := h.fsys.CreateExclusive(name, self.Marshal(), 0o644)
		if err == nil {
			h.holder = name
		}
		if !errors.Is(err, fs.ErrExist) {
			return
		}
	}
	if lockbackend.RemoveIfExists(h.fsys, name) != nil || self == nil {
		return
	}
	if h.fsys.CreateExclusive(name, self.Marshal(), 0o644) == nil {
		h.holder = name
	}
}

// Release removes the stamp while the lock still keeps others out, then
// drops the lock.
func (h *sqliteHeld) Release() error {
	var err error
	if h.holder != "" {
		err = lockbackend.RemoveIfExists(h.fsys, h.holder)
	}
	return errors.Join(err, h.unlock())
}

// IsHeld asks the kernel whether another process holds SQLite's locks on
// the database (LockHeld), where the platform is the operating
// system with modernc.org/sqlite; otherwise it makes one attempt at a
// shared lock through p's SQLite, with no busy timeout and no retries.
// Either way it writes nothing: a missing file stays missing.
func (b *sqliteBackend) IsHeld(ctx context.Context) (lockbackend.Probed, error) {
	if kernelKnows(b.p) {
		held, pid, err := LockHeld(b.path, b.busyPath)
		if err != nil {
			return lockbackend.Probed{}, fmt.Errorf("plock: check SQLite lock %s: %w", b.path, err)
		}
		return lockbackend.Probed{Held: held, PID: pid}, nil
	}
	db, err := b.p.SQLite.Open(b.path, platform.SQLiteOptions{ReadOnly: true})
	if err != nil {
		return lockbackend.Probed{}, err
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n)
	switch code := platform.SQLiteCode(err); {
	case err == nil, code == platform.SQLiteCantOpen:
		return lockbackend.Probed{}, nil
	case code == platform.SQLiteBusy || code == platform.SQLiteLocked:
		return lockbackend.Probed{Held: true}, nil
	}
	return lockbackend.Probed{}, fmt.Errorf("plock: check SQLite lock %s: %w", b.path, err)
}
