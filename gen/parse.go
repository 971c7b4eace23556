package gen

import (
	"fmt"
	"strings"
)

// keywords may not be used as names, so that every line has one reading.
var keywords = map[string]bool{
	"machine": true, "family": true, "trigger": true, "fact": true, "output": true,
	"state": true, "initial": true, "ignore": true, "reject": true, "waive": true,
}

// Parse parses the spec in src. file names it in errors (as given, so a
// relative path stays relative). On error, the returned error is an
// ErrorList and the Spec holds what could be parsed.
func Parse(file string, src []byte) (*Spec, error) {
	p := &parser{spec: &Spec{File: file}, errs: errorSink{file: file}}
	text := strings.TrimPrefix(string(src), "\uFEFF") // a byte order mark some editors write
	for i, line := range strings.Split(text, "\n") {
		p.parseLine(&lineParser{toks: lexLine(line, i+1), eol: Pos{i + 1, len(line) + 1}})
	}
	if p.spec.Machine == nil && len(p.errs.list) == 0 {
		p.errs.add(Pos{1, 1}, KindSyntax, "missing machine declaration: a spec starts with `machine Name`")
	}
	return p.spec, p.errs.err()
}

// parser holds the state that crosses lines: the spec so far, the doc
// comment waiting for its declaration, and the errors.
type parser struct {
	spec *Spec
	doc  []string
	errs errorSink
}

// syntaxError aborts the current line; parseLine recovers it.
type syntaxError struct {
	pos Pos
	msg string
}

func (p *parser) parseLine(l *lineParser) {
	if len(l.toks) == 0 { // blank or comment line: a pending doc is detached
		p.doc = nil
		return
	}
	if first := l.toks[0]; first.kind == tokDoc {
		p.doc = append(p.doc, first.text)
		return
	}
	doc := strings.Join(p.doc, "\n")
	p.doc = nil
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(syntaxError)
			if !ok {
				panic(r)
			}
			p.errs.add(e.pos, KindSyntax, "%s", e.msg)
		}
	}()
	p.parseStatement(l, doc)
}

func (p *parser) parseStatement(l *lineParser, doc string) {
	first := l.next()
	if first.kind == tokBadDoc {
		l.fail(first.pos, "doc comment holds %s, which Go comments cannot", first.text)
	}
	if first.kind != tokIdent {
		l.fail(first.pos, "expected a declaration or a transition, found %s", first.describe())
	}
	switch first.text {
	case "machine":
		p.parseMachine(l, first.pos, doc)
	case "state":
		p.parseState(l, doc)
	case "trigger":
		p.spec.Triggers = append(p.spec.Triggers, Decl{Name: l.name("trigger name"), Doc: doc})
	case "fact":
		p.spec.Facts = append(p.spec.Facts, Decl{Name: l.name("fact name"), Doc: doc})
	case "output":
		p.spec.Outputs = append(p.spec.Outputs, Decl{Name: l.name("output name"), Doc: doc})
	case "waive":
		p.spec.Waivers = append(p.spec.Waivers, Decl{Name: l.name("guarantee name"), Doc: doc})
	default:
		p.parseRule(l, l.ident(first))
		return
	}
	l.end()
}

func (p *parser) parseMachine(l *lineParser, pos Pos, doc string) {
	m := &MachineDecl{Name: l.name("machine name"), Doc: doc}
	if t := l.peek(); t.kind == tokIdent && t.text == "family" {
		l.next()
		m.Family = l.name("family name")
	}
	if prev := p.spec.Machine; prev != nil {
		p.errs.add(pos, KindDuplicate, "second machine declaration (the first is at line %d): a spec holds one machine", prev.Name.Pos.Line)
		return
	}
	p.spec.Machine = m
}

func (p *parser) parseState(l *lineParser, doc string) {
	s := StateDecl{Decl: Decl{Name: l.name("state name"), Doc: doc}}
	if t := l.peek(); t.kind == tokIdent && t.text == "initial" {
		l.next()
		s.Initial = true
	}
	p.spec.States = append(p.spec.States, s)
}

// parseRule parses a transition or a disposition after its state name.
func (p *parser) parseRule(l *lineParser, from Ident) {
	t := l.next()
	switch {
	case t.kind == tokDash:
		p.parseRow(l, from)
	case t.kind == tokIdent && (t.text == "ignore" || t.text == "reject"):
		d := Disposition{State: from, Reject: t.text == "reject"}
		d.Triggers = l.nameList("trigger name")
		l.end()
		p.spec.Dispositions = append(p.spec.Dispositions, d)
	default:
		l.fail(t.pos, "expected '--Trigger', 'ignore' or 'reject' after %q, found %s", from.Name, describeOrEnd(t))
	}
}

func (p *parser) parseRow(l *lineParser, from Ident) {
	r := RowDecl{From: from, Trigger: l.name("trigger name")}
	if l.peek().kind == tokLBrack {
		l.next()
		r.Guard = l.guard()
	}
	if l.peek().kind == tokSlash {
		l.next()
		r.Outputs = l.nameList("output name")
	}
	if l.peek().kind == tokArrow {
		l.next()
		to := l.name("target state")
		r.To = &to
	}
	l.end()
	p.spec.Rows = append(p.spec.Rows, r)
}

// lineParser walks the tokens of one line.
type lineParser struct {
	toks []lexeme
	i    int
	eol  Pos // position just past the line, for "end of line" errors
}

// peek returns the next token; past the last one it returns a token of kind
// zero at the end of the line.
func (l *lineParser) peek() lexeme {
	if l.i < len(l.toks) {
		return l.toks[l.i]
	}
	return lexeme{pos: l.eol}
}

func (l *lineParser) next() lexeme {
	t := l.peek()
	if l.i < len(l.toks) {
		l.i++
	}
	return t
}

func (l *lineParser) fail(pos Pos, format string, args ...any) {
	panic(syntaxError{pos: pos, msg: fmt.Sprintf(format, args...)})
}

// name reads an identifier that is not a keyword.
func (l *lineParser) name(what string) Ident {
	t := l.next()
	if t.kind != tokIdent {
		l.fail(t.pos, "expected %s, found %s", what, describeOrEnd(t))
	}
	return l.ident(t)
}

func (l *lineParser) ident(t lexeme) Ident {
	if keywords[t.text] {
		l.fail(t.pos, "%q is a keyword and cannot be a name", t.text)
	}
	return Ident{Name: t.text, Pos: t.pos}
}

// nameList reads one or more names separated by commas.
func (l *lineParser) nameList(what string) []Ident {
	list := []Ident{l.name(what)}
	for l.peek().kind == tokComma {
		l.next()
		list = append(list, l.name(what))
	}
	return list
}

// guard reads fact literals up to and including "]". An empty guard is
// allowed and always holds.
func (l *lineParser) guard() []Literal {
	var lits []Literal
	if l.peek().kind == tokRBrack {
		l.next()
		return lits
	}
	for {
		neg := l.peek().kind == tokBang
		if neg {
			l.next()
		}
		lits = append(lits, Literal{Fact: l.name("fact name"), Negated: neg})
		switch t := l.next(); t.kind {
		case tokComma:
		case tokRBrack:
			return lits
		default:
			l.fail(t.pos, "expected ',' or ']' in guard, found %s", describeOrEnd(t))
		}
	}
}

// end requires the line to be finished.
func (l *lineParser) end() {
	if t := l.peek(); t.kind != 0 {
		l.fail(t.pos, "unexpected %s", t.describe())
	}
}

func describeOrEnd(t lexeme) string {
	if t.kind == 0 {
		return "end of line"
	}
	return t.describe()
}
