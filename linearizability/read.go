package linearizability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/rivus/collab/internal/jsontail"
)

// LineError reports a line of a recorded file that ReadHistory cannot
// use: not a line a Recorder writes, or one that contradicts the lines
// before it (a second call or return of one operation, a return without
// its call).
type LineError struct {
	File string // the reader's Name(), or "file N" (from 1) without one
	Line int    // from 1
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("linearizability: %s:%d: %v", e.File, e.Line, e.Err)
}

// Unwrap returns what is wrong with the line.
func (e *LineError) Unwrap() error { return e.Err }

// opID names an operation across the merged files: its recording
// process and sequence number.
type opID struct {
	p  int
	id uint64
}

// merger pairs call and return lines into events.
type merger struct {
	events []Event
	index  map[opID]int // into events
	torn   int
}

// ReadHistory reads the files that Recorders wrote (one a process, in
// any order) and merges them into one History. A call line without its
// return is an open operation (Event.Open, Return 0). A final line cut
// short without its newline is skipped and counted in History.Torn; any
// other line that cannot be used is a *LineError naming the file and
// line. Reading errors are returned as they are.
func ReadHistory(files ...io.Reader) (History, error) {
	m := merger{index: make(map[opID]int)}
	for i, f := range files {
		if err := m.readFile(f, fileName(f, i)); err != nil {
			return History{}, err
		}
	}
	sortEvents(m.events)
	return History{Events: m.events, Torn: m.torn}, nil
}

// fileName names reader i for errors.
func fileName(r io.Reader, i int) string {
	if n, ok := r.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("file %d", i+1)
}

// readFile merges the lines of one file.
func (m *merger) readFile(r io.Reader, name string) error {
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if len(bytes.TrimSpace(b)) > 0 {
			if lerr := m.add(b); lerr != nil {
				if errors.Is(err, io.EOF) { // unterminated: torn by a crash
					m.torn++
					return nil
				}
				return &LineError{File: name, Line: n, Err: lerr}
			}
		}
		if err != nil {
			return nil
		}
	}
}

// add merges one line.
func (m *merger) add(b []byte) error {
	var l line
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return err
	}
	if jsontail.Trailing(dec, b) {
		return errors.New("text after the JSON object")
	}
	switch l.Ev {
	case evCall:
		return m.call(l)
	case evRet:
		return m.ret(l)
	}
	return fmt.Errorf("ev is %q; want %q or %q", l.Ev, evCall, evRet)
}

// call adds an operation, open until its return.
func (m *merger) call(l line) error {
	id := opID{l.P, l.ID}
	if _, dup := m.index[id]; dup {
		return fmt.Errorf("second call of operation %d of process %d", l.ID, l.P)
	}
	if l.Kind == 0 || l.Out != nil {
		return errors.New("a call needs a kind and has no output")
	}
	e := Event{Process: l.P, Key: l.Key, Kind: l.Kind, Call: l.At, Open: true}
	if l.In != nil {
		e.Input = *l.In
	}
	if (l.Kind == Crash) != (l.Victim != nil) {
		return errors.New("a crash, and only a crash, names its victim")
	}
	if l.Victim != nil {
		e.Process = *l.Victim
	}
	m.index[id] = len(m.events)
	m.events = append(m.events, e)
	return nil
}

// ret closes the operation the return line names.
func (m *merger) ret(l line) error {
	i, ok := m.index[opID{l.P, l.ID}]
	switch {
	case !ok:
		return fmt.Errorf("return of operation %d of process %d before its call", l.ID, l.P)
	case !m.events[i].Open:
		return fmt.Errorf("second return of operation %d of process %d", l.ID, l.P)
	case l.Out == nil || l.Kind != 0 || l.In != nil:
		return errors.New("a return has an output and no kind or input")
	case l.At < m.events[i].Call:
		return fmt.Errorf("return at %d is before its call at %d", l.At, m.events[i].Call)
	case l.At == math.MaxInt64:
		return errors.New("return at math.MaxInt64, which stands for an open end")
	}
	m.events[i].Open = false
	m.events[i].Return = l.At
	m.events[i].Output = *l.Out
	return nil
}
