//go:build !unix

package main

import "github.com/rivus/collab/platform/sqlite"

// host is the operating system with modernc.org/sqlite: without POSIX
// locks, a SQLite-mode lock is taken through SQLite.
var host = sqlite.OS
