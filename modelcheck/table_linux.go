package modelcheck

import (
	"syscall"
	"unsafe"
)

// hugeTableBytes is the size from which a table of plain words is mapped
// with transparent huge pages asked for: a probe of a table far larger
// than the caches misses the TLB too with 4 KiB pages, and a huge page
// covers 2 MiB, so that the table's pages fit the TLB.
const hugeTableBytes = 8 << 20

const hugePage = 2 << 20

// table is a slice of n zeroed plain words (no pointers: the memory may
// be outside the Go heap, where the collector does not look), and the
// release that frees it, for its set to call once it no longer reads it
// (when it grows, and when its search ends); nil when the collector
// frees it.
func table[T pair | uint64](n int) ([]T, func()) {
	size := n * int(unsafe.Sizeof(*new(T)))
	if size < hugeTableBytes {
		return make([]T, n), nil
	}
	// Map a huge page more, to place the table on a huge page's start.
	mem, err := syscall.Mmap(-1, 0, size+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]T, n), nil
	}
	off := (hugePage - int(uintptr(unsafe.Pointer(&mem[0])))%hugePage) % hugePage
	// MADV_HUGEPAGE (14) is advice: a kernel without transparent huge
	// pages still maps the table, in small pages.
	_ = syscall.Madvise(mem[off:off+size], 14)
	mappedBytes.Add(int64(len(mem)))
	return unsafe.Slice((*T)(unsafe.Pointer(&mem[off])), n), func() { _ = syscall.Munmap(mem) }
}
