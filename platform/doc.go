// Package platform is the edge through which collab reaches the operating
// system: files, process identity and liveness, clocks, and the port to
// SQLite.
//
// Runtime packages (plock, lease) never call the operating system
// directly; they take a *Platform, so that tests can substitute the fake in
// platform/platformtest and so that a host without SQLite can run the file
// fallbacks. A nil *Platform means the operating system's, in every
// package that takes one; in plock, the operating system's with SQLite
// (platform/sqlite's OS), which a program that does not link
// platform/sqlite cannot have: there a nil platform is an error that says
// how to choose.
//
// This package links no SQLite driver: [SQLite] is an interface, and [OS]
// has none. Package platform/sqlite holds the opener of modernc.org/sqlite
// and the OS platform with it, so that only the programs that use SQLite
// pay for it. [Clock] is package platform/clock's, which lanes imports
// alone: it needs time and nothing else of this edge.
//
// # Process identity
//
// An [Identity] names one process for as long as it lives and never again:
// host name, boot id, pid, the process's start time and, on Linux, the pid
// namespace. Two identities share one process table when their boot ids and
// pid namespaces are equal ([Identity.SameProcessTable]); the host name is
// kept for people to read and is not used for judging, so a renamed host
// still judges its own holders by process, and containers on one kernel
// with separate pid namespaces never misjudge each other.
//
// # Liveness
//
// [Judge] decides whether the process an identity names is [Alive], [Dead]
// or [Unknown], or lives in another process table ([Remote]). A process is
// Dead only on proof: same process table, and the pid is gone (ESRCH), is a
// zombie, or now belongs to a process with another start time. EPERM means
// alive. An unreadable process (hidepid) is Unknown, which callers treat as
// alive. A Remote holder can only be judged by a time-to-live.
//
// # Platforms
//
// [OS] serves linux and darwin. On windows the package builds, files and
// clocks work, and so does platform/sqlite, but process identity is not
// supported: [Process.Self] returns an error matching
// [errors.ErrUnsupported], and every judgement is Unknown. Every lock collab builds on these files
// supports local directories only; neither SQLite's locks nor lock files
// are reliable on NFS.
package platform
