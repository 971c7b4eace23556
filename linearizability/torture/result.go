package torture

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	lz "github.com/rivus/collab/linearizability"
)

// Result is a finished campaign: its configuration (with defaults), the
// counts, the merged history's check, and where to look.
type Result struct {
	Config Config
	Stats  Stats
	// Counts are the merged history's operations by kind and outcome
	// ("open": the process was killed during the operation).
	Counts map[lz.Kind]map[string]int
	// Unknown counts the operations of unknown outcome by reason:
	// killed, paused, timeout, lease lost, store error, unreported,
	// command failed (see the package doc).
	Unknown map[string]int
	History lz.History
	Report  lz.Report
	// EndedAlive are the breaks without force and the takeovers on proof
	// of death that ended a holder that was not dead (see the package
	// doc): each is a failure, which the history's check cannot see.
	EndedAlive []string
	// HTML is the visualisation written, or "": its copy in Kept when
	// Run kept one.
	HTML string
	// Kept is where the evidence of a failed campaign is kept: a new
	// directory that holds a copy of the run directory (see
	// Config.KeepDir), or Dir itself with Config.DirKept; "" when the
	// campaign passed, or no copy could be made (KeepErr).
	Kept string
	// KeepErr is why the evidence could not be kept, or kept whole.
	KeepErr error
	// SchemaDropped says that Run dropped the PostgreSQL schema it named
	// for the run (see Config.PostgresSchema).
	SchemaDropped bool
}

// Failed reports whether the campaign found a violation (of
// linearizability, or a break of a live holder) or could not decide.
func (r *Result) Failed() bool { return r.Report.Verdict != lz.Linearizable || len(r.EndedAlive) > 0 }

// count tallies the history by kind and outcome.
func count(h lz.History) map[lz.Kind]map[string]int {
	c := map[lz.Kind]map[string]int{}
	for _, e := range h.Events {
		if c[e.Kind] == nil {
			c[e.Kind] = map[string]int{}
		}
		out := e.Output.Status.String()
		if e.Open {
			out = "open"
		}
		c[e.Kind][out]++
	}
	return c
}

var outcomes = []string{"ok", "refused", "done", "unknown", "open"}

// Print writes the summary: the campaign's settings, a table of
// operations by kind and outcome, the operations of unknown outcome by
// reason, the faults, the verdict; after a violation the failing
// objects, where porcupine's search stopped (lz.Stuck: the operations it
// could not place, with their processes, inputs, outputs and times) and
// the shortest failing history; the seed to replay a failure, the
// visualisation's path, the run directory, and where a failure's
// evidence is kept.
func (r *Result) Print(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "campaign: store %s, %d workers (%d in pid namespaces of their own), %d keys, TTL %v, heartbeat %v, seed %d, %v\n",
		c.Store, c.Workers, c.PIDNamespaces, c.Keys, c.TTL, c.Heartbeat, c.Seed, r.Stats.Elapsed.Round(time.Millisecond))
	if len(c.Policies) > 0 {
		fmt.Fprintf(w, "lease policies (by worker, in turn): %s\n", strings.Join(c.Policies, ", "))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "operation\t%s\ttotal\t\n", strings.Join(outcomes, "\t"))
	for k := lz.Acquire; k <= lz.Break; k++ { // Break is the last kind
		row, total := []string{k.String()}, 0
		for _, o := range outcomes {
			row = append(row, fmt.Sprint(r.Counts[k][o]))
			total += r.Counts[k][o]
		}
		fmt.Fprintf(tw, "%s\t%d\t\n", strings.Join(row, "\t"), total)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "unknown outcomes: %s\n", unknownSummary(r.Unknown))
	s := r.Stats
	fmt.Fprintf(w, "faults: %d SIGKILLs, %d SIGSTOP/SIGCONT pauses of at least %v, %d worker processes\n",
		s.Kills, s.Pauses, c.Pause, s.Started)
	if c.Server.Faults != nil {
		fmt.Fprintf(w, "server faults: %d stops, %d postmaster pauses, of %v to %v; holders cut off by a stop that declared their leases lost: %d\n",
			s.ServerStops, s.ServerPauses, c.Server.Outage, 2*c.Server.Outage, s.CutOff)
	}
	fmt.Fprintf(w, "leases: %d takeovers, %d declared lost, %d stale fenced writes refused, %d accepted\n", s.Takeovers, s.Lost, s.Refused, s.StaleWrites)
	fmt.Fprintf(w, "process locks: %d taken, %d refused, as %s\n", r.Counts[lz.Lock]["ok"], r.Counts[lz.Lock]["refused"], lockKind(c.Store))
	fmt.Fprintf(w, "waits: %d, %d handed the lease; breaks without force: %d holders ended; leaders' terms: %d, %d of them lost\n",
		s.Waits, s.Handovers, s.Breaks, s.Terms, s.TermsLost)
	fmt.Fprintf(w, "holders ended on a judgement (a break, a takeover on proof of death): %d, of which not dead: %d\n", s.Breaks+s.DeadTakeovers, len(r.EndedAlive))
	for _, b := range r.EndedAlive {
		fmt.Fprintf(w, "  ENDED ALIVE: %s\n", b)
	}
	if c.Collab != "" {
		fmt.Fprintf(w, "commands under collab lock: %d run, %d of them on after collab lock was killed (the guard kept the lock), %d refused as held\n",
			s.CommandLocks, s.CommandOrphans, s.CommandRefused)
		if c.CollabLock != "" && c.Store != StoreFile {
			fmt.Fprintf(w, "  of them under the small collab, its SQLite lock taken through the kernel beside collab-full's through SQLite: %d\n", s.CommandKernel)
		}
		fmt.Fprintf(w, "commands under collab lease run --wait: %d run, %d gave up waiting\n", s.LeaseRuns, s.LeaseRunsTimedOut)
	}
	if c.PIDNamespaces > 0 {
		fmt.Fprintf(w, "second process tables: %d worker processes each in a pid namespace of its own; %d breaks and takeovers of a holder across process tables\n",
			s.InPIDNamespaces, s.CrossTable)
	}
	rep := r.Report
	fmt.Fprintf(w, "porcupine: %s (%d operations, %d objects, %d of unknown outcome, %d segments of at most %d operations, checked in %v)\n",
		rep.Verdict, rep.Ops, rep.Keys, rep.Uncertain, rep.Segments, rep.Longest, rep.Elapsed.Round(time.Millisecond))
	if len(rep.Failing) > 0 {
		fmt.Fprintf(w, "violating objects, the shortest failing history first: %s\n", objects(rep.Failing))
	}
	if rep.Stuck != nil {
		fmt.Fprint(w, rep.Stuck)
	}
	if r.Failed() {
		fmt.Fprintf(w, "replay with seed %d\n", c.Seed)
	}
	if f := rep.ShortestFailing(); f != "" {
		fmt.Fprint(w, f)
	}
	if r.HTML != "" {
		fmt.Fprintf(w, "history: %s\n", r.HTML)
	}
	fmt.Fprintf(w, "run directory: %s\n", c.Dir)
	if r.Kept != "" && r.Kept != c.Dir {
		fmt.Fprintf(w, "evidence kept in %s (a copy of the run directory, which its caller may remove)\n", r.Kept)
	}
	if r.KeepErr != nil {
		fmt.Fprintf(w, "evidence not kept whole: %v\n", r.KeepErr)
	}
	if c.Store == StorePostgres {
		kept := "kept"
		if r.SchemaDropped {
			kept = "dropped"
		}
		fmt.Fprintf(w, "PostgreSQL schema: %s (%s)\n", c.PostgresSchema, kept)
	}
}

// objects lists ids as "lease "k1", lock "k0"".
func objects(ids []lz.ObjectID) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return strings.Join(out, ", ")
}

// lockKind names how the workers' process locks are taken on store.
func lockKind(store string) string {
	switch store {
	case StoreFile:
		return "lock files"
	case StoreSQLite:
		return "SQLite exclusive locks, through SQLite and (three workers in four) through the kernel alone"
	}
	return "SQLite exclusive locks"
}

// ProgressLine renders s as the one-line live progress.
func ProgressLine(s Stats) string {
	return fmt.Sprintf("%5.1fs  %7d ops  %4d kills  %3d pauses  %5d takeovers  %5d stale writes refused",
		s.Elapsed.Seconds(), s.Ops, s.Kills, s.Pauses, s.Takeovers, s.Refused)
}
