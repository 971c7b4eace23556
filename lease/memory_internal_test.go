package lease

import (
	"strings"
	"testing"
)

// TestMemoryFenceForgetsKeys: the memory repository's fences keep no
// entry for a free key.
func TestMemoryFenceForgetsKeys(t *testing.T) {
	r := NewMemoryRepository()
	for i := range 50 {
		unlock, err := r.Fence(t.Context(), strings.Repeat("x", i+1))
		if err != nil {
			t.Fatal(err)
		}
		unlock()
		unlock()
	}
	if n := r.fences.Size(); n != 0 {
		t.Fatalf("%d fence entries after every fence was released", n)
	}
}
