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
// shape: 100 keys (ten of them locks), 16 processes.
func BenchmarkCheckHistory(b *testing.B) {
	for _, n := range []int{100_000} {
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) {
			h := genHistory(1, n, 100, 16)
			for b.Loop() {
				if r := Check(h, time.Minute); r.Verdict != Linearizable {
					b.Fatalf("verdict %v\n%s", r.Verdict, r.ShortestFailing())
				}
			}
		})
	}
}
