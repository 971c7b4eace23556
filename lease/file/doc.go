// Package file keeps lease records in a directory, one JSON file per key:
// the store.Repository for hosts without SQLite. It imports no database
// driver.
//
// [Open] creates the directory if missing. A record file holds
//
//	{
//	  "format": 1,
//	  "key": "task:42",
//	  "revision": 7,
//	  "lease": {"generation": 3, "holder": {...}, "released": false,
//	            "renewedAt": "2026-01-01T00:00:00Z", "ttl": "1m0s",
//	            "value": "10.0.0.7:8080"}
//	}
//
// with "value" (store.Snapshot.Value) left out when empty: a record
// without one, such as those of versions before values, reads as
// publishing none, and those versions read a record with one, ignoring
// it.
// Save takes the key's lock file (.locks/<name>.lock) around
// read-compare-write and replaces the record with the platform's
// WriteFileAtomic (a synced temporary file renamed over it), so Load
// needs no lock and sees a whole record, old or new. A file whose format,
// key or fields are wrong is a corrupt record, never overwritten. The
// fences are lock files in .fences/<name>.fence. Lock and fence files are
// empty, and stay once created: removing a lock file that another process
// may be opening would let two processes hold "the" lock at once. A crash
// between writing and renaming leaves a dot-prefixed temporary file,
// which readers ignore. The repository lists its keys (store.Lister);
// file names that no key encodes to are skipped.
//
// # File names
//
// A key's file name is its bytes with 'a'-'z', '0'-'9' and '-' kept and
// every other byte written as '_' and two lowercase hex digits:
// "task:42" is task_3a42.json, "A/../b" is _41_2f_2e_2e_2fb.json. The
// name is reversible, holds only characters that every file system
// (case-insensitive ones included) keeps apart, and is never ".", ".."
// or hidden. An encoding longer than 200 characters continues in
// subdirectories of 200 characters each, so a 256-byte key of any
// characters stays within the 255-byte limit of one file name. The
// Windows device names (CON, NUL, ...) are not escaped; leases need
// process identities, which Windows does not support. The fences of
// lease/sqlite are named the same way.
//
// # Waiting for a lock
//
// Fences and write locks are exclusive flock(2) locks taken by
// platform.FS.TryLock: they exclude other processes and other opens in
// this process, and the kernel drops them when the holder dies, however
// it dies. Waiters of one repository handle queue on an in-process
// per-key lock first (handed over by channel), and the first of them
// polls the file: TryLock, then a wait on the platform's clock of 1 ms
// doubling to 100 ms (with jitter), until the lock is free or the
// context ends. These locks work on local file systems only, not on NFS.
//
// # Waking waiters
//
// A release's or a break's tombstone wakes the key's waiters
// (store.Watcher, lease.Manager.AcquireWait) in every process of the
// host: its writer notifies the key's wake file in .fences/ (<name>.wake)
// once the record is replaced, and each waiter watches it
// (platform.Notifier: inotify on Linux; elsewhere waiters poll). The file
// is judged on its descriptor as the others are: one planted by another
// user wakes no one, and its waiters poll. A repository opened read-only
// watches nothing.
package file
