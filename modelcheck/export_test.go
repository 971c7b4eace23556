package modelcheck

// SetParallelBatch sets how many worlds a parallel batch expands, and
// returns the function that restores it.
func SetParallelBatch(n int) (restore func()) {
	old := parallelBatch
	parallelBatch = n
	return func() { parallelBatch = old }
}

// MappedBytes returns the bytes the visited sets have mapped outside the
// Go heap so far.
func MappedBytes() int64 { return mappedBytes.Load() }
