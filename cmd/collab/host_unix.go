//go:build unix

package main

import (
	"sync"

	"github.com/rivus/collab/internal/sqlitelock"
	"github.com/rivus/collab/platform"
)

// host is the operating system, its SQLite's locks taken through the
// kernel: collab links no SQLite.
var host = sync.OnceValue(func() *platform.Platform {
	p := *platform.OS()
	p.SQLite = sqlitelock.KernelLocks
	return &p
})
