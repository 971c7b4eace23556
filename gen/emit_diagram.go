package gen

import (
	"strings"

	"github.com/rivus/collab/policy"
)

// emitDOT writes the Graphviz diagram: one node per state, its doc as the
// tooltip and its name quoted (a state may be called Node or Graph), and
// one edge per row labelled "Trigger [guard] / outputs", internal rows
// dashed. Ignored and rejected triggers are not drawn.
func emitDOT(t *policy.Table) []byte {
	var p printer
	p.line("// %s", header(t))
	p.line("digraph %s {", dotQuote(t.Name))
	p.line("\trankdir=LR;")
	p.line("\tnode [shape=box, style=rounded];")
	// "_start" cannot clash with a state: spec names start with a letter.
	p.line("\t_start [shape=point, label=\"\"];")
	p.line("\t_start -> %s;", dotQuote(t.States[t.Initial].Name))
	for _, s := range t.States {
		if s.Doc != "" {
			p.line("\t%s [tooltip=%s];", dotQuote(s.Name), dotQuote(oneLine(s.Doc)))
		} else {
			p.line("\t%s;", dotQuote(s.Name))
		}
	}
	for _, r := range t.Rows {
		attrs := "label=" + dotQuote(rowLabel(t, r))
		if doc := t.Triggers[r.Trigger].Doc; doc != "" {
			attrs += ", tooltip=" + dotQuote(oneLine(doc))
		}
		if r.Internal {
			attrs += ", style=dashed"
		}
		p.line("\t%s -> %s [%s];", dotQuote(t.States[r.From].Name), dotQuote(t.States[r.To].Name), attrs)
	}
	p.line("}")
	return p.buf.Bytes()
}

// emitMermaid writes the Mermaid stateDiagram-v2 diagram: the initial
// state and one transition per row labelled "Trigger [guard] / outputs".
// Mermaid cannot dash an edge, so an internal row is a self-loop like a
// re-entry; the table and the DOT diagram tell them apart.
func emitMermaid(t *policy.Table) []byte {
	var p printer
	p.line("stateDiagram-v2")
	p.line("    %%%% %s", header(t))
	p.line("    [*] --> %s", t.States[t.Initial].Name)
	for _, r := range t.Rows {
		p.line("    %s --> %s: %s", t.States[r.From].Name, t.States[r.To].Name, rowLabel(t, r))
	}
	return p.buf.Bytes()
}

// dotQuote quotes s as a DOT string.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// oneLine joins the lines of a doc comment with spaces.
func oneLine(doc string) string {
	return strings.ReplaceAll(doc, "\n", " ")
}
