package lanes

import (
	"context"
	"testing"
	"unsafe"
)

// TestStateFillsCacheLines: what the lock guards begins on a cache line
// and fills whole lines, and a lane of string keys fits one, so that a
// step moves no line more than it needs between cores.
func TestStateFillsCacheLines(t *testing.T) {
	const line = 64
	check := func(name string, size, at uintptr) {
		t.Helper()
		if size%line != 0 || size > 512 {
			t.Errorf("%s: the state is %d bytes, want a multiple of %d up to 512, which the allocator aligns", name, size, line)
		}
		if at%line != 0 {
			t.Errorf("%s: the state begins %d bytes into a cache line", name, at%line)
		}
	}
	s := newLanes(t, Config[string]{Activate: func(context.Context, string) error { return nil }})
	check("string keys", unsafe.Sizeof(*s.lanesState), uintptr(unsafe.Pointer(s.lanesState)))
	i := newLanes(t, Config[int]{Activate: func(context.Context, int) error { return nil }})
	check("int keys", unsafe.Sizeof(*i.lanesState), uintptr(unsafe.Pointer(i.lanesState)))
	if size := unsafe.Sizeof(lane[string]{}); size > line {
		t.Errorf("a lane of string keys is %d bytes, more than a cache line", size)
	}
	if off := unsafe.Offsetof(s.lanesState.pending); off != line {
		t.Errorf("the pending effects begin at byte %d of the state, want %d: the first line holds the lock, the counts and the queue", off, line)
	}
	if off := unsafe.Offsetof(s.lanesState.lanes); off != 2*line {
		t.Errorf("the map of lanes begins at byte %d of the state, want %d: the second line holds what a start writes", off, 2*line)
	}
}
