//go:build !linux

package modelcheck

// table is a slice of n zeroed plain words, and the release that frees
// it; nil when the collector frees it. Only linux
// maps large tables on huge pages (table_linux.go).
func table[T pair | uint64](n int) ([]T, func()) {
	return make([]T, n), nil
}
