// Package platformtest provides a fake platform.Platform for deterministic
// tests: a clock that moves only when told, a process table in which a test
// starts, kills, reaps and reuses pids and changes the host name or boot
// id, and real files in a temporary directory. SQLite is optional.
package platformtest
