package linearizability

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Event is one recorded operation: who called what on which key, when it
// was called and when it returned, on the host's monotonic clock (so the
// readings of every process of one boot compare).
type Event struct {
	Process int    `json:"process"`
	Key     string `json:"key"`
	Kind    Kind   `json:"kind"`
	Input   Input  `json:"input"`
	Output  Output `json:"output"`
	Call    int64  `json:"call"`             // monotonic ns, read before the call
	Return  int64  `json:"return,omitempty"` // monotonic ns, read after the return; 0 if Open
	// Open is true when the operation never returned: its process
	// crashed. Its outcome is unknown, whatever Output says.
	Open bool `json:"open,omitempty"`
}

// Uncertain reports whether the event's outcome is unknown: it is open,
// or it returned Unknown. The checker lets such an operation take effect
// at any moment after its call, or never.
func (e Event) Uncertain() bool { return e.Open || e.Output.Status == Unknown }

// String describes the event for people: process, times, operation.
func (e Event) String() string {
	end := "open"
	if !e.Open {
		end = fmt.Sprint(e.Return)
	}
	return fmt.Sprintf("p%d [%d, %s] %s", e.Process, e.Call, end, describe(e.Kind, e.Input, e.Output, e.Open))
}

// History is the merged record of a run, ordered by call time (then
// process, for equal times).
type History struct {
	Events []Event
	// Torn counts final lines cut short by a crash while they were being
	// written, which ReadHistory skips: the operation of a torn call line
	// was never invoked, and a torn return line leaves its operation open.
	Torn int
	// Local says that every operation takes effect inside the process
	// that records it, as with SQLite and files, and not in a server that
	// may act after its client died or gave up (PostgreSQL). Check then
	// bounds the operations of unknown outcome: one that returned Unknown
	// took effect by its return or never, and one left open by a kill,
	// by the moment its process was reaped (the Crash event's return) or
	// never. Without it they may take effect at any later moment. One
	// case escapes the bound: a SQLite writer in WAL mode killed between
	// writing its commit frame and publishing it in the WAL index leaves
	// a commit no one sees, which a recovery (when every connection has
	// closed and one opens again) may bring back after the reap; the check
	// would then report a violation that is SQLite's, not the lease's.
	Local bool
}

// sortEvents orders events by call time, then process, then key, so
// that a history reads the same however its files were merged.
func sortEvents(evs []Event) {
	slices.SortStableFunc(evs, func(a, b Event) int {
		return cmp.Or(cmp.Compare(a.Call, b.Call), cmp.Compare(a.Process, b.Process), cmp.Compare(a.Key, b.Key))
	})
}

// describe renders an operation for people: acquire -> gen 3, and one
// that returned Unknown with its reason: release(token 2) -> unknown
// (timeout).
func describe(k Kind, in Input, out Output, open bool) string {
	var arg string
	switch k {
	case Release:
		arg = fmt.Sprintf("(token %d)", in.Token)
	case Write:
		arg = fmt.Sprintf("(token %d, %q)", in.Token, in.Value)
	}
	res := out.Status.String()
	switch {
	case open:
		res = "open (crashed)"
	case out.Status == Unknown && out.Reason != "":
		res = fmt.Sprintf("unknown (%s)", out.Reason)
	case out.Status == OK && k == Acquire:
		res = fmt.Sprintf("gen %d", out.Gen)
	case out.Status == OK && k == Break:
		res = fmt.Sprintf("gen %d broken", out.Gen)
	case out.Status == OK && k == Read:
		res = fmt.Sprintf("%q", out.Value)
	}
	return fmt.Sprintf("%s%s -> %s", k, arg, res)
}

// since renders a duration in ns relative to a start, for printed
// histories.
func since(start, t int64) string {
	return time.Duration(t - start).String()
}
