package modelcheck

import "sync/atomic"

// mappedBytes counts the bytes table has mapped outside the Go heap, for
// benchmarks, which count allocation by runtime.MemStats.TotalAlloc.
var mappedBytes atomic.Int64

// freeTable calls release, the release table returned with a table, if
// there is one: the table must not be read after.
func freeTable(release func()) {
	if release != nil {
		release()
	}
}
