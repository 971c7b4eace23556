package linearizability

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/rivus/collab/platform"
)

// line is one line of a recorded file: the call of an operation (Ev
// "call", with Key, Kind and In) or its return (Ev "ret", with Out). The
// two share the process and the operation's sequence number, by which
// ReadHistory pairs them.
type line struct {
	Ev   string `json:"ev"`
	P    int    `json:"p"`
	ID   uint64 `json:"id"`
	At   int64  `json:"at"`
	Key  string `json:"key,omitempty"`
	Kind Kind   `json:"kind,omitempty"`
	In   *Input `json:"in,omitempty"`
	// Victim is the process a crash line is about (its writer is the
	// process that killed it).
	Victim *int    `json:"victim,omitempty"`
	Out    *Output `json:"out,omitempty"`
}

const (
	evCall = "call"
	evRet  = "ret"
)

// Recorder writes the operations of one process to w, one JSON line at
// the call and one at the return. Each line goes to w in one Write, so
// a process killed (SIGKILL) between operations leaves every line it
// wrote in the file: the kernel has it. Lines are not fsynced, so a
// crash of the machine may lose some; runs that need that survive
// should record to a file they sync. A Recorder is safe for concurrent
// use.
type Recorder struct {
	clock   platform.Clock
	process int

	mu   sync.Mutex
	w    io.Writer
	next uint64
	err  error // the first write error; every later write returns it
}

// NewRecorder returns a recorder of process's operations to w, timed on
// clock's monotonic readings (platform.RealClock() in real runs, so that
// the files of several processes of one boot compare).
func NewRecorder(w io.Writer, process int, clock platform.Clock) *Recorder {
	return &Recorder{w: w, process: process, clock: clock}
}

// Pending is a begun operation, ended once by End.
type Pending struct {
	r    *Recorder
	id   uint64
	once sync.Once
}

// Begin records the call of kind on key with in, and returns the pending
// operation, which the caller invokes after Begin returns. An error means
// the call line was not written: the caller must not invoke the
// operation, or the history would miss it.
func (r *Recorder) Begin(key string, kind Kind, in Input) (*Pending, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	l := line{Ev: evCall, P: r.process, ID: r.next, At: int64(r.clock.Monotonic()), Key: key, Kind: kind, In: &in}
	if err := r.writeLocked(l); err != nil {
		return nil, err
	}
	return &Pending{r: r, id: r.next}, nil
}

// Instant records an operation of kind on key that took effect between
// two readings of the clock with nothing between them: its call and its
// return, with out, in one Write, so that a kill leaves both lines or
// neither. Enter and Leave are recorded so, inside the fenced section.
func (r *Recorder) Instant(key string, kind Kind, in Input, out Output) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	at := int64(r.clock.Monotonic())
	call := line{Ev: evCall, P: r.process, ID: r.next, At: at, Key: key, Kind: kind, In: &in}
	ret := line{Ev: evRet, P: r.process, ID: r.next, At: at + 1, Out: &out}
	return r.writeLocked(call, ret)
}

// BeginCrash records the start of killing process victim: call it
// before sending the signal, and End the crash (with Output{Status: OK})
// once the victim is known to be dead (reaped). The crash frees the lock
// the victim held; the models place it anywhere between the two.
func (r *Recorder) BeginCrash(victim int) (*Pending, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	l := line{Ev: evCall, P: r.process, ID: r.next, At: int64(r.clock.Monotonic()), Kind: Crash, Victim: &victim}
	if err := r.writeLocked(l); err != nil {
		return nil, err
	}
	return &Pending{r: r, id: r.next}, nil
}

// End records the return of the operation with out. Only the first End
// of a Pending writes; later ones return nil. An error leaves the
// operation open in the history, which is sound: open operations may
// have had either outcome.
func (p *Pending) End(out Output) error {
	var err error
	p.once.Do(func() {
		r := p.r
		at := int64(r.clock.Monotonic()) // read before the lock: never earlier than the return
		r.mu.Lock()
		defer r.mu.Unlock()
		err = r.writeLocked(line{Ev: evRet, P: r.process, ID: p.id, At: at, Out: &out})
	})
	return err
}

// writeLocked encodes ls, one line each, and writes them in one Write.
func (r *Recorder) writeLocked(ls ...line) error {
	if r.err != nil {
		return r.err
	}
	var b []byte
	for _, l := range ls {
		j, err := json.Marshal(l)
		if err != nil {
			return &RecordError{Process: r.process, Err: err}
		}
		b = append(append(b, j...), '\n')
	}
	if _, err := r.w.Write(b); err != nil {
		r.err = &RecordError{Process: r.process, Err: err}
		return r.err
	}
	return nil
}

// RecordError reports a line a Recorder could not write.
type RecordError struct {
	Process int
	Err     error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("linearizability: recording process %d: %v", e.Process, e.Err)
}

// Unwrap returns the write's error.
func (e *RecordError) Unwrap() error { return e.Err }
