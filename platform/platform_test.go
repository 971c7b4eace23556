package platform

import "testing"

func TestOS(t *testing.T) {
	p := OS()
	if p != OS() {
		t.Fatal("OS() returned two platforms")
	}
	if p.FS == nil || p.Process == nil || p.Clock == nil {
		t.Fatalf("OS() = %+v, want files, processes and a clock", p)
	}
	if p.SQLite != nil {
		t.Fatalf("OS().SQLite = %v, want none: platform/sqlite has it", p.SQLite)
	}
	if p.Process != OSProcess() {
		t.Error("OS().Process is not OSProcess()")
	}
}

func TestGetClock(t *testing.T) {
	if got := (&Platform{}).GetClock(); got != RealClock() {
		t.Errorf("GetClock of a nil Clock = %v, want the real clock", got)
	}
	c := fixedClock{RealClock()}
	if got := (&Platform{Clock: c}).GetClock(); got != c {
		t.Errorf("GetClock = %v, want the platform's clock", got)
	}
}

// fixedClock is a Clock distinguishable from the real one.
type fixedClock struct{ Clock }
