package modelcheck

// SetParallelBatch sets how many worlds a parallel batch expands, and
// returns the function that restores it.
func SetParallelBatch(n int) (restore func()) {
	old := parallelBatch
	parallelBatch = n
	return func() { parallelBatch = old }
}
