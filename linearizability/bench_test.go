package linearizability

import (
	"fmt"
	"testing"
	"time"
)

// TestGeneratedHistory checks the generator the benchmark uses: its
// histories are linearizable, busy, and one corrupted answer makes them
// a violation.
func TestGeneratedHistory(t *testing.T) {
	h := genHistory(1, 5000, 20, 8)
	r := Check(h, testTimeout)
	if r.Verdict != Linearizable || r.Ops != 5000 {
		t.Fatalf("verdict %v, %d ops\n%s", r.Verdict, r.Ops, r.ShortestFailing())
	}
	counts := make(map[string]int)
	for _, e := range h.Events {
		counts[fmt.Sprintf("%v %v", e.Kind, e.Output.Status)]++
	}
	for _, want := range []string{"acquire ok", "acquire refused", "write ok", "write refused", "lock ok", "lock refused", "read ok"} {
		if counts[want] == 0 {
			t.Errorf("no %q in the generated history: %v", want, counts)
		}
	}
	if r.Uncertain == 0 {
		t.Error("no open operation in the generated history")
	}
	for i, e := range h.Events {
		if e.Kind == Read && e.Output.Status == OK && !e.Open {
			h.Events[i].Output.Value = "never written"
			break
		}
	}
	if r := Check(h, testTimeout); r.Verdict != Violation || len(r.Failing) != 1 {
		t.Fatalf("corrupted read: verdict %v, failing %v", r.Verdict, r.Failing)
	}
}

// BenchmarkCheckHistory checks a generated history of the recorded
// shape: 100 keys (ten of them locks), 16 processes; one with a real
// campaign's uncertain share on a local store (0.3% Unknown, and the open
// operations bounded by their processes' kills), checked as Local; and
// that one on 3 keys, as the demo runs, at two lengths, whose time per
// operation shows the check growing linearly with the history (see
// chain).
func BenchmarkCheckHistory(b *testing.B) {
	const n = 100_000
	for _, c := range []struct {
		name string
		h    History
	}{
		{fmt.Sprintf("ops=%d", n), genHistory(1, n, 100, 16)},
		{fmt.Sprintf("ops=%d,uncertain=0.3%%,local", n), genCampaign(1, n, 100, 16, 0.003)},
		{fmt.Sprintf("ops=%d,keys=3,uncertain=0.3%%,local", n), genCampaign(1, n, 3, 8, 0.003)},
		{fmt.Sprintf("ops=%d,keys=3,uncertain=0.3%%,local", 4*n), genCampaign(1, 4*n, 3, 8, 0.003)},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if r := Check(c.h, time.Minute); r.Verdict != Linearizable {
					b.Fatalf("verdict %v\n%s", r.Verdict, r.ShortestFailing())
				}
			}
			b.ReportMetric(float64(b.Elapsed())/float64(b.N*len(c.h.Events)), "ns/operation")
		})
	}
}

// TestGeneratedCampaign: the campaign-like history is linearizable, has
// its uncertain share, and stays so checked without the bounds.
func TestGeneratedCampaign(t *testing.T) {
	h := genCampaign(1, 20_000, 20, 8, 0.003)
	r := Check(h, testTimeout)
	if r.Verdict != Linearizable || r.Uncertain < 40 {
		t.Fatalf("verdict %v, %d uncertain\n%s", r.Verdict, r.Uncertain, r.ShortestFailing())
	}
	h.Local = false
	if r := Check(h, testTimeout); r.Verdict != Linearizable {
		t.Fatalf("without the bounds: verdict %v", r.Verdict)
	}
}
