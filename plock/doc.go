// Package plock is a single-instance process lock: one process at a time
// holds the lock at a path, and the acquisitions of one lock inside a
// process take turns in memory.
//
// A nil *platform.Platform means the operating system, as everywhere in
// collab; here that is sqlite.OS() of platform/sqlite: the SQLite mode,
// the default of the reference, in every program that links that
// package. In a program that does not, a nil platform is an *ArgError
// saying how to choose a mode (below): never the lock-file mode, so that
// two programs that both pass nil never lock one path in two modes.
// platform.OS() has no SQLite, so it takes the lock file mode. A platform
// without its FS or Process, one with a SQLite in a program that does not
// link platform/sqlite (a SQLite of the caller's own), or an
// Options.Policy of another family, is an *ArgError naming the argument, returned before the call looks at its
// context or touches any file.
//
// # Choosing a mode, and what it links
//
// plock does not import platform/sqlite, so a program links SQLite
// (modernc.org/sqlite: a plock program that links it is some 10.6 MB, one
// that takes only lock files some 2.9 MB, and neither links fmt, which
// plock and platform do without) only if it asks for it; the
// SQLite mode's code, and database/sql, come with platform/sqlite too. A
// program that wants the SQLite mode passes sqlite.OS(), or nil; nil
// works once platform/sqlite is linked by any import: directly, through
// lease/sqlite, or, in a program that uses nothing else of it, by
//
//	import _ "github.com/rivus/collab/platform/sqlite"
//
// which registers sqlite.OS() with plock as the package initialises. A
// program that wants lock files passes platform.OS() and links no SQLite;
// every program that takes that lock must then pass a platform without
// SQLite too (collab lock --lock-file), since a lock file and a SQLite
// lock at one path do not exclude each other.
//
// A held lock is a *HeldError naming the holder when known; every one
// matches [ErrHeld] with errors.Is.
//
// # Modes
//
// On a platform with SQLite the lock is a SQLite database held with
// locking_mode=EXCLUSIVE on one pinned connection, with a rollback journal,
// by a BEGIN EXCLUSIVE transaction that stays open while the lock is held:
// nothing is written or synced (a new, empty database gets its first page
// once, in its first acquisition: a transaction on an empty database
// writes it). Nothing in the database must survive a crash, since the lock
// is the kernel's: it drops the lock the moment the holder's connection
// closes or its process exits or crashes, and nothing is reclaimed. The
// collab command, which links no SQLite, takes the same lock through the
// kernel alone: the write locks SQLite's unix VFS holds on the lock
// bytes of an exclusively locked database, taken with fcntl; holders of
// the two kinds exclude each other, and IsHeld sees both. The holder's
// identity goes into <path>.holder for diagnostics only: a process that cannot read its own identity still takes the lock,
// writes no stamp, and removes one left by a holder that died.
//
// Without SQLite the lock is a file holding the holder's identity, created
// by linking a complete private file to the path, so no empty lock file is
// ever visible. A lock file whose holder is dead on proof (see
// platform.Judge) is reclaimed on the next attempt, one reclaimer at a
// time; so is one stamped in an earlier boot of the machine (another boot
// id: lock files live in local directories only, so no other machine
// writes them). One stamped in another pid namespace of this boot cannot
// be judged, and stays held until removed. An empty lock file (another implementation crashed between
// creating it and writing its stamp) counts as held for 30 s. A lock file
// whose contents are not an identity is a *StampError, and is left in place
// for a person. The lock file needs the identity to judge its holder, so
// without one Acquire fails with that error and creates nothing.
//
// # Turns inside a process
//
// While one task holds a lock or attempts it, the next task of the same
// process waits in a FIFO queue for it to release the lock or give up, and
// only then makes its own attempt; it never opens SQLite against a holder
// in its own process (closing any descriptor of a file drops the process's
// POSIX locks on it). Without Options.Wait such a call gets a *HeldError at
// once. Cancelling a waiting call's context takes it out of the queue and
// leaves the others' turns as they were. Callers share turns when they
// name the same file (its directory resolved through symlinks) through
// platforms with the same SQLite value (without SQLite, the same FS), as
// every sqlite.OS() (and every platform.OS()) does, and a nil platform
// with them; a SQLite or FS value that is not comparable (one that holds
// a func, a map or a slice) shares turns with every value of its type. The turns are the generated turn policy (spec/turn.fsm)
// driven by this package; a custom policy of the turn family can be
// passed in Options.Policy. What a step does to a lock's queue is
// internal/turnstep, the code the turn world of package worldmodel runs in
// every world it explores. The turns live in this package's
// state, so a second copy of the package in one binary does not share
// them and meets the first through the lock itself, as another process
// does.
//
// # IsHeld
//
// IsHeld writes nothing: no .holder, and a missing lock file stays
// missing. With the operating system's SQLite (sqlite.OS()) on unix it
// asks the kernel (fcntl F_GETLK) whether another process has a write
// lock on SQLite's lock bytes: held, or being taken. It takes no lock, so
// no Acquire ever meets it. The query cannot see this process's own
// locks, which the turns know: IsHeld asks them before and after, for
// every opener of the path. The descriptor it queries through (Acquire's
// too, below) stays open for the life of the process, one per lock path
// (a new one when the file is replaced): closing it would drop this
// process's POSIX locks on the file, and with them a holder's in this
// process. With another SQLite, or
// on windows, IsHeld makes one attempt at a shared lock through SQLite,
// with no busy timeout and no retries, and reads no identity; the first
// attempt of an Acquire running at the same moment waits out such a check
// (a 10 ms busy timeout, then a few more tries), and later retries of a
// waiting Acquire, which have none, find the free lock busy and get it
// after another backoff.
//
// # A refused attempt
//
// That busy wait is for a check, not for a holder. So with the operating
// system's SQLite on unix, each attempt first asks the kernel the same
// question (F_GETLK, on the same descriptor, opened without following a
// link and checked to be a regular file, after the checks of the
// directory and files below): a write lock of another process on
// SQLite's lock bytes (the holder's over all of them, in
// locking_mode=EXCLUSIVE; a taker's on the pending and reserved bytes)
// refuses the attempt at once, naming the holder from its .holder stamp,
// without opening SQLite: a refusal takes some tens of microseconds, not
// the first attempt's tries of 10 ms. A read lock there is a check in
// progress, which the attempt goes on to wait out as above. The answer is
// a hint: a holder that comes after it still meets SQLite's own lock and
// refuses the attempt there, after the busy wait. The query cannot see
// this process's own locks: a holder here through another SQLite value is
// met in SQLite, and one through the same value in the turns, first. With
// another SQLite, or on windows,
// every attempt asks SQLite: a refusal there takes the busy wait of each
// of the first attempt's tries, some 45 ms.
//
// # Limits
//
// A SQLite lock lives only in a directory that its owner (this user or
// root) alone can write: SQLite opens the database's journal by name and
// follows links, so a journal another user planted, or a link planted
// between a check and the open, would be used. Anywhere else (/tmp, any
// sticky or group-writable directory) Acquire fails with a
// *platform.SharedDirError naming the directory and the lock-file mode
// (a platform without SQLite), which every user of such a lock must then
// take. The database and its journal must be this user's single-link
// regular files, the database private (*platform.SQLiteFileError).
//
// The SQLite lock database is created 0600: a user who could read it
// could hold a read transaction open and keep every holder out. So only
// its owner (and root) can take the lock. Another user (a client of a root
// daemon) may still ask IsHeld and Inspect: on linux they answer from the
// kernel's table of locks (/proc/locks), which anyone may read, with the
// holder's pid; elsewhere they return the open's permission error, and
// who holds it is read from the .holder stamp, which is 0644. A lock file
// is 0644 too: its stamp is all it holds.
//
// Local directories only: neither SQLite's locks nor lock files are
// reliable on NFS. Holders of lock files are judged by process, so every
// process sharing a lock must see one process table; a process on another
// kernel that shares the directory (a virtual machine's shared folder) is
// outside that, and its lock file would be reclaimed as an earlier boot's.
// On windows process
// identity is unsupported: a SQLite lock is taken with an unknown holder,
// and the lock file mode fails. Go cannot interrupt an attempt in flight:
// a context that ends during an attempt takes effect once it is over.
//
// Built with the tag collabmonitor, a contract monitor (monitor.go)
// checks that a task attempts the lock only while it owns its turn, and
// that one task of this process holds a lock at a time. Without the tag
// it costs nothing.
package plock
