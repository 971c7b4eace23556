package platformtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/rivus/collab/platform/platformtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestClockMovesOnlyWhenTold(t *testing.T) {
	c := platformtest.NewClock()
	wall, mono := c.Now(), c.Monotonic()
	if !wall.Equal(platformtest.Epoch) {
		t.Fatalf("Now() = %v, want Epoch %v", wall, platformtest.Epoch)
	}
	c.Advance(3 * time.Second)
	if got := c.Now().Sub(wall); got != 3*time.Second {
		t.Errorf("wall moved %v, want 3s", got)
	}
	if got := c.Monotonic() - mono; got != 3*time.Second {
		t.Errorf("monotonic moved %v, want 3s", got)
	}
	c.SetWall(wall.Add(-time.Hour))
	if got := c.Monotonic() - mono; got != 3*time.Second {
		t.Errorf("SetWall moved the monotonic clock to +%v", got)
	}
}

func TestTimersFireInDeadlineOrderAtTheirDeadline(t *testing.T) {
	c := platformtest.NewClock()
	start := c.Now()
	late, early := c.NewTimer(2*time.Second), c.NewTimer(time.Second)
	c.Advance(999 * time.Millisecond)
	select {
	case <-early.C():
		t.Fatal("timer fired before its deadline")
	default:
	}
	c.Advance(5 * time.Second)
	if got := (<-early.C()).Sub(start); got != time.Second {
		t.Errorf("early timer fired at +%v, want +1s", got)
	}
	if got := (<-late.C()).Sub(start); got != 2*time.Second {
		t.Errorf("late timer fired at +%v, want +2s", got)
	}
	if c.Pending() != 0 {
		t.Errorf("Pending() = %d after both fired", c.Pending())
	}
}

func TestTimerStopAndReset(t *testing.T) {
	c := platformtest.NewClock()
	tm := c.NewTimer(time.Second)
	if !tm.Stop() {
		t.Fatal("Stop of an active timer reported false")
	}
	if tm.Stop() {
		t.Fatal("second Stop reported true")
	}
	c.Advance(time.Hour)
	select {
	case <-tm.C():
		t.Fatal("stopped timer fired")
	default:
	}
	if tm.Reset(time.Second) {
		t.Fatal("Reset of a stopped timer reported it active")
	}
	c.Advance(time.Second)
	<-tm.C()
	// A tick not yet received is dropped by Reset, as time.Timer does.
	tm.Reset(time.Second)
	c.Advance(time.Second)
	tm.Reset(time.Second)
	select {
	case <-tm.C():
		t.Fatal("stale tick delivered after Reset")
	default:
	}
	tm.Reset(0)
	<-tm.C() // fires at once
}

func TestAfterFuncRunsWhenDue(t *testing.T) {
	c := platformtest.NewClock()
	ran := make(chan struct{})
	c.AfterFunc(time.Minute, func() { close(ran) })
	c.Advance(time.Minute)
	<-ran
	stopped := c.AfterFunc(time.Minute, func() { t.Error("stopped AfterFunc ran") })
	stopped.Stop()
	c.Advance(time.Hour)
}

func TestWaitForTimers(t *testing.T) {
	c := platformtest.NewClock()
	armed := make(chan struct{})
	go func() {
		defer close(armed)
		tm := c.NewTimer(time.Second)
		<-tm.C()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitForTimers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second)
	<-armed

	short, cancelShort := context.WithCancel(context.Background())
	cancelShort()
	if err := c.WaitForTimers(short, 1); err != context.Canceled {
		t.Fatalf("WaitForTimers on a cancelled context = %v, want context.Canceled", err)
	}
}
