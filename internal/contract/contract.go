// Package contract ends a process whose runtime broke a duty its contract
// monitor checks (lease, lanes and plock, in builds with the tag
// collabmonitor).
//
// A broken duty means the runtime's bookkeeping no longer describes what
// it does, and it is found with the runtime's lock held: a panic would
// run the callers' deferred functions, which take that lock again and hang
// the process instead of failing it. So Fail writes the report to standard
// error and exits at once, with status 2, as a Go program does on a fatal
// error; a test binary fails with the report in its output, and a
// campaign's worker leaves it in its log.
package contract

import (
	"os"
	"sync"
)

// Fail writes report and ends the process with status 2. Tests of a
// monitor replace it (see SetFail).
func Fail(report string) {
	mu.Lock()
	f := fail
	mu.Unlock()
	f(report)
}

var (
	mu   sync.Mutex
	fail = func(report string) {
		os.Stderr.WriteString(report)
		os.Exit(2)
	}
)

// SetFail makes Fail call f instead, until the returned function restores
// it: a monitor's own tests make f panic, to recover the report.
func SetFail(f func(report string)) (restore func()) {
	mu.Lock()
	defer mu.Unlock()
	prev := fail
	fail = f
	return func() {
		mu.Lock()
		defer mu.Unlock()
		fail = prev
	}
}
