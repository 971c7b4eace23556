package clock

import (
	"testing"
	"time"
)

// failsafe bounds every wait on a timer: a timer that never fires fails
// the test instead of hanging it.
const failsafe = 10 * time.Second

func TestRealNow(t *testing.T) {
	before := time.Now()
	now := Real().Now()
	after := time.Now()
	if now.Before(before) || now.After(after) {
		t.Fatalf("Now() = %v, not between %v and %v", now, before, after)
	}
}

func TestRealMonotonicNeverGoesBack(t *testing.T) {
	c := Real()
	prev := c.Monotonic()
	for range 10000 {
		now := c.Monotonic()
		if now < prev {
			t.Fatalf("Monotonic went back from %v to %v", prev, now)
		}
		prev = now
	}
}

func TestRealNewTimerFires(t *testing.T) {
	const d = 5 * time.Millisecond
	c := Real()
	start := time.Now()
	tm := c.NewTimer(d)
	select {
	case at := <-tm.C():
		if elapsed := at.Sub(start); elapsed < d {
			t.Fatalf("timer of %v fired after %v", d, elapsed)
		}
	case <-time.After(failsafe):
		t.Fatal("timer did not fire")
	}
	if tm.Stop() {
		t.Error("Stop of a fired timer reported it active")
	}
}

func TestRealTimerStopAndReset(t *testing.T) {
	c := Real()
	tm := c.NewTimer(time.Hour)
	if !tm.Stop() {
		t.Fatal("Stop of a pending timer reported it inactive")
	}
	if tm.Stop() {
		t.Fatal("second Stop reported the timer active")
	}
	if tm.Reset(time.Millisecond) {
		t.Fatal("Reset of a stopped timer reported it active")
	}
	select {
	case <-tm.C():
	case <-time.After(failsafe):
		t.Fatal("reset timer did not fire")
	}
	if !c.NewTimer(time.Hour).Reset(time.Hour) {
		t.Error("Reset of a pending timer reported it inactive")
	}
}

func TestRealAfterFunc(t *testing.T) {
	c := Real()
	ran := make(chan struct{})
	tm := c.AfterFunc(time.Millisecond, func() { close(ran) })
	if tm.C() != nil {
		t.Error("AfterFunc timer has a channel")
	}
	select {
	case <-ran:
	case <-time.After(failsafe):
		t.Fatal("AfterFunc did not run")
	}
	if tm.Stop() {
		t.Error("Stop after the function ran reported the timer active")
	}
}

func TestRealAfterFuncStop(t *testing.T) {
	c := Real()
	tm := c.AfterFunc(time.Hour, func() { panic("stopped AfterFunc ran") })
	if !tm.Stop() {
		t.Fatal("Stop of a pending AfterFunc reported it inactive")
	}
	ran := make(chan struct{})
	tm = c.AfterFunc(time.Hour, func() { close(ran) })
	if !tm.Reset(time.Millisecond) {
		t.Fatal("Reset of a pending AfterFunc reported it inactive")
	}
	select {
	case <-ran:
	case <-time.After(failsafe):
		t.Fatal("reset AfterFunc did not run")
	}
}
