package main

import (
	"fmt"
	"strings"
	"time"
)

// report is a whole run: the baseline, every mutant's result, the time.
type report struct {
	cfg      *config
	started  time.Time
	commit   string
	baseline *result
	results  []result
	took     time.Duration
}

// verdict names the layers that caught r, in a word or a few.
func (r result) verdict() string {
	switch {
	case r.stale != "":
		return "STALE: the patch no longer applies"
	case r.setup != "":
		return "ERROR: " + r.setup
	}
	var by []string
	for _, l := range allLayers {
		if l.strong() && r.layers[l].status == caught {
			by = append(by, l.String())
		}
	}
	switch {
	case len(by) > 0:
		return strings.Join(by, ", ")
	case r.skipped():
		return "not run: needs PostgreSQL"
	case r.layers[unit].status == caught:
		return "unit tests only"
	}
	return "NOTHING"
}

// caughtStrongly: the model checker, a monitor, a campaign or the
// checker's controls caught r.
func (r result) caughtStrongly() bool {
	for _, l := range allLayers {
		if l.strong() && r.layers[l].status == caught {
			return true
		}
	}
	return false
}

// skipped: r needs a PostgreSQL server that the run does not have, and
// nothing else caught it; the run does not count it.
func (r result) skipped() bool {
	return r.stale == "" && r.setup == "" && !r.caughtStrongly() &&
		(r.layers[campaign].status == needsPG || r.layers[unit].status == needsPG)
}

// ok: the run asks nothing more of r.
func (r result) ok() bool {
	return r.stale == "" && r.setup == "" && (r.caughtStrongly() || r.skipped())
}

// baselineOK: no layer failed on the unmutated copy.
func (rep *report) baselineOK() bool {
	b := rep.baseline
	if b == nil {
		return true
	}
	if b.setup != "" {
		return false
	}
	for _, lr := range b.layers {
		if lr.status == caught || lr.status == broken {
			return false
		}
	}
	return true
}

// ok: the baseline passed and every mutant was caught by a strong layer
// (or skipped for want of PostgreSQL).
func (rep *report) ok() bool {
	if !rep.baselineOK() {
		return false
	}
	for _, r := range rep.results {
		if !r.ok() {
			return false
		}
	}
	return true
}

// cell renders one layer's result in the table.
func (r result) cell(l layer) string {
	if r.stale != "" || r.setup != "" {
		return "-"
	}
	lr, ok := r.layers[l]
	if !ok || lr.status == notRun {
		return "-"
	}
	switch lr.status {
	case notApplicable, needsPG:
		return lr.status.String()
	case caught:
		s := "**caught**"
		if l == campaign {
			s += " " + strings.SplitN(lr.detail, " ", 2)[0] // k/N
		}
		return s + " " + roundTook(lr.took)
	}
	return lr.status.String() + " " + roundTook(lr.took)
}

// table renders the results as a Markdown table, the baseline first.
func (rep *report) table() string {
	header := []string{"mutant"}
	for _, l := range allLayers {
		header = append(header, l.String())
	}
	header = append(header, "caught by")
	rows := [][]string{header}
	all := rep.results
	if rep.baseline != nil {
		all = append([]result{*rep.baseline}, all...)
	}
	for _, r := range all {
		row := []string{r.m.name}
		for _, l := range allLayers {
			row = append(row, r.cell(l))
		}
		v := r.verdict()
		if r.m.patch == "" {
			v = "baseline passed"
			if !rep.baselineOK() {
				v = "BASELINE FAILED"
			}
		}
		rows = append(rows, append(row, v))
	}
	width := make([]int, len(header))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	line := func(row []string) {
		for i, c := range row {
			fmt.Fprintf(&b, "| %-*s ", width[i], c)
		}
		b.WriteString("|\n")
	}
	line(rows[0])
	for i := range width {
		fmt.Fprintf(&b, "|%s", strings.Repeat("-", width[i]+2))
	}
	b.WriteString("|\n")
	for _, row := range rows[1:] {
		line(row)
	}
	return b.String()
}

// summary lists the mutants by how they fared, and the time taken.
func (rep *report) summary() string {
	var strong, unitOnly, nothing, stale, failed, skipped []string
	for _, r := range rep.results {
		switch {
		case r.stale != "":
			stale = append(stale, r.m.name)
		case r.setup != "":
			failed = append(failed, r.m.name)
		case r.caughtStrongly():
			strong = append(strong, r.m.name)
		case r.skipped():
			skipped = append(skipped, r.m.name)
		case r.layers[unit].status == caught:
			unitOnly = append(unitOnly, r.m.name)
		default:
			nothing = append(nothing, r.m.name)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "caught by the model checker, a monitor, a campaign or the checker's controls: %d of %d\n", len(strong), len(rep.results))
	list := func(what string, names []string) {
		if len(names) > 0 {
			fmt.Fprintf(&b, "%s (%d): %s\n", what, len(names), strings.Join(names, ", "))
		}
	}
	list("caught only by unit tests", unitOnly)
	list("caught by nothing", nothing)
	list("stale (the patch no longer applies)", stale)
	list("could not be built", failed)
	list("not run (needs PostgreSQL: set COLLAB_TEST_POSTGRES_URL)", skipped)
	if !rep.baselineOK() {
		b.WriteString("the BASELINE FAILED: a layer fails without any mutant, so its catches mean nothing\n")
	}
	fmt.Fprintf(&b, "total time: %v\n", rep.took.Round(time.Second))
	return b.String()
}

// markdown is the report file: settings, table, summary and each
// mutant's details.
func (rep *report) markdown() string {
	c := rep.cfg
	var b strings.Builder
	b.WriteString("# Mutants: which layer catches each planted bug\n\n")
	fmt.Fprintf(&b, "Written by `make mutants` on %s, from commit %s. Layers: %s. Campaign: `collab demo --duration %v --keys 4 --pause-every 250ms`, seeds %s, stores %s. Total time %v.\n\n",
		rep.started.UTC().Format("2006-01-02"), rep.commit, c.layerList(), c.duration, joinInts(c.seeds), strings.Join(c.stores, ", "), rep.took.Round(time.Second))
	b.WriteString(rep.table())
	b.WriteString("\n```\n" + rep.summary() + "```\n\n## Details\n")
	all := rep.results
	if rep.baseline != nil {
		all = append([]result{*rep.baseline}, all...)
	}
	for _, r := range all {
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n", r.m.name, r.m.desc)
		switch {
		case r.stale != "":
			fmt.Fprintf(&b, "- stale: `git apply` says: %s\n", r.stale)
			continue
		case r.setup != "":
			fmt.Fprintf(&b, "- error: %s\n", r.setup)
			continue
		}
		for _, l := range allLayers {
			lr, ok := r.layers[l]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "- %s: %s", l, lr.status)
			if lr.took > 0 {
				fmt.Fprintf(&b, " in %s", roundTook(lr.took))
			}
			if lr.detail != "" {
				fmt.Fprintf(&b, ": %s", lr.detail)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
