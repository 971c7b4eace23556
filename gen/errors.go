package gen

import (
	"fmt"
	"slices"
	"strconv"
)

// Kind classifies an Error: one kind per validation rule, plus syntax.
type Kind uint8

// The error kinds.
const (
	KindSyntax           Kind = iota + 1 // the text does not follow the grammar
	KindDuplicate                        // a name declared twice, or listed twice, or two names with one Go name
	KindUnknown                          // a reference to an undeclared name or family
	KindInitial                          // not exactly one initial state
	KindUnreachable                      // a state no path from the initial state reaches
	KindNondeterministic                 // two rows of one state and trigger can fire for one fact assignment
	KindIncomplete                       // a state, trigger and fact assignment that nothing handles
	KindConflict                         // a pair both ignored or rejected and handled otherwise
	KindFamily                           // a family spec's vocabulary differs from its family
	KindLimit                            // more states, triggers, facts or outputs than policy IDs hold
	KindUnused                           // a declared name that nothing uses
	KindWaiver                           // a waive line that names no guarantee of the spec's family
)

var kindNames = [...]string{
	KindSyntax:           "syntax",
	KindDuplicate:        "duplicate",
	KindUnknown:          "unknown",
	KindInitial:          "initial",
	KindUnreachable:      "unreachable",
	KindNondeterministic: "nondeterministic",
	KindIncomplete:       "incomplete",
	KindConflict:         "conflict",
	KindFamily:           "family",
	KindLimit:            "limit",
	KindUnused:           "unused",
	KindWaiver:           "waiver",
}

// String returns the kind's name, as used in the golden files.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Error is one problem in a spec, at a position of its file.
type Error struct {
	File string
	Line int // 1-based
	Col  int // 1-based, in bytes
	Kind Kind
	Msg  string
}

// Error returns "file:line:col: message".
func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// ErrorList is every problem found in a spec, in file order. Parse and
// Validate return one as their error; errors.As finds its *Error values.
type ErrorList []*Error

// Error returns the first error, and how many more there are.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0], len(l)-1)
}

// Unwrap returns the errors, so that errors.As and errors.Is see each.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// errorSink collects errors for one file.
type errorSink struct {
	file string
	list ErrorList
}

func (s *errorSink) add(pos Pos, kind Kind, format string, args ...any) {
	s.list = append(s.list, &Error{File: s.file, Line: pos.Line, Col: pos.Col, Kind: kind, Msg: fmt.Sprintf(format, args...)})
}

// err returns the collected errors sorted by position, or nil.
func (s *errorSink) err() error {
	if len(s.list) == 0 {
		return nil
	}
	slices.SortStableFunc(s.list, func(a, b *Error) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Col - b.Col
	})
	return s.list
}
