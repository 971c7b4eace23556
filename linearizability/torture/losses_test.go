package torture

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	lz "github.com/rivus/collab/linearizability"
	"github.com/rivus/collab/platform"
)

// TestCutOff: a loss counts as a holder cut off by a server stop when
// its holder acquired that lease before the stop began and declared it
// lost during the stop or within 3 TTLs of its end; not a lease acquired
// during the stop, a loss during a pause of the server or long after a
// stop, or a token the process never acquired. The tally, fed the files
// a line at a time, counts as cutOff does on the whole.
func TestCutOff(t *testing.T) {
	const ttl = 300 * time.Millisecond
	at := func(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
	clock := &handClock{Clock: platform.RealClock()}
	var hist bytes.Buffer
	rec := lz.NewRecorder(&hist, 1, clock)
	acquire := func(key string, call, ret int, gen uint64) {
		clock.at = at(call)
		p, err := rec.Begin(key, lz.Acquire, lz.Input{})
		if err != nil {
			t.Fatal(err)
		}
		clock.at = at(ret)
		if err := p.End(lz.Output{Status: lz.OK, Gen: gen}); err != nil {
			t.Fatal(err)
		}
	}
	outages := []Outage{
		{Kind: ServerStop, From: at(1000), To: at(3000)},
		{Kind: ServerPause, From: at(5000), To: at(6000)},
		{Kind: ServerStop, From: at(8000), To: at(9000)},
	}
	acquire("a", 900, 950, 1)   // cut off by the first stop
	acquire("b", 990, 1010, 1)  // returned after the stop began
	acquire("c", 4900, 4950, 1) // lost during a pause
	acquire("d", 7000, 7100, 4) // lost 3 TTLs after the second stop
	acquire("e", 7900, 7950, 2) // lost within 3 TTLs of its end
	var lost bytes.Buffer
	for _, l := range []struct {
		ms    int
		key   string
		token uint64
	}{{1300, "a", 1}, {1300, "b", 1}, {5400, "c", 1}, {9000 + 901, "d", 4}, {9000 + 899, "e", 2}, {8500, "a", 2}} {
		fmt.Fprintf(&lost, "%d %s %d\n", at(l.ms), l.key, l.token)
	}
	lost.WriteString("123 cut") // the last line cut short by a SIGKILL

	c := newCutTally()
	for _, l := range bytes.SplitAfter(hist.Bytes(), []byte("\n")) {
		c.addHistory(l)
	}
	for _, l := range bytes.SplitAfter(lost.Bytes(), []byte("\n")) {
		c.addLosses(1, l)
	}
	if len(c.losses) != 6 {
		t.Fatalf("read %d losses, want 6: %v", len(c.losses), c.losses)
	}
	if n := c.count(outages, ttl); n != 2 {
		t.Fatalf("%d holders cut off, want 2 (a and e)", n)
	}
	if n := c.count(outages[:2], ttl); n != 1 {
		t.Fatalf("%d holders cut off by the first stop, want 1 (a)", n)
	}
}
