package modelcheck

import "testing"

// A recent set starts full of a visited world, so the zero world, which a
// zeroed slot would hold, is not taken for a visited one.
func TestRecentSetStartsWithTheVisitedWorld(t *testing.T) {
	hs := newHasher[[16]byte]()
	start, zero := world(5), [16]byte{}
	r := newRecentSet(start)
	if r.has(&zero, hs.hash(&zero), &hs) {
		t.Fatal("the zero world is in a new recent set")
	}
	if !r.has(&zero, hs.hash(&zero), &hs) {
		t.Fatal("the zero world is not in the set after it missed")
	}
	// A world put in the slot of another replaces it.
	other := world(6)
	h := hs.hash(&other)
	r.has(&other, h, &hs)
	clash := world(7)
	if r.has(&clash, h, &hs) {
		t.Fatal("a different world with the same slot was found")
	}
	if r.has(&other, h, &hs) {
		t.Fatal("the replaced world is still found")
	}
	if len(r.slots)*16 > recentBytes || len(r.slots)*32 <= recentBytes {
		t.Fatalf("%d slots of 16 bytes for %d bytes", len(r.slots), recentBytes)
	}
}
