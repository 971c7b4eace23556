package linearizability

import "fmt"

// Kind is the operation an Event records. The lease object of a key takes
// Acquire, Release, Write, Read and Break; the lock object of a key takes Lock
// and Unlock; the fence object of a key takes Enter and Leave, the edges
// of a fenced section (recorded inside it, with Recorder.Instant); Crash
// is the end of a process, recorded by whoever killed it.
type Kind uint8

// The operation kinds. Their JSON names are the lower-case words of
// kindNames, which never change: recorded files outlive the binary.
const (
	Acquire Kind = iota + 1 // acquire a lease; Output.Gen is the new generation
	Release                 // release the lease of generation Input.Token
	Write                   // a fenced write of Input.Value with Input.Token
	Read                    // read the last accepted write (Output.Value)
	Lock                    // take the process lock
	Unlock                  // give the process lock back
	Crash                   // Process ended without unlocking (killed)
	Enter                   // a fenced section of the lease starts
	Leave                   // the fenced section ends
	Break                   // end the lease from outside (lease.Break); Output.Gen is the generation broken
)

var kindNames = [...]string{
	Acquire: "acquire",
	Release: "release",
	Write:   "write",
	Read:    "read",
	Lock:    "lock",
	Unlock:  "unlock",
	Crash:   "crash",
	Enter:   "enter",
	Leave:   "leave",
	Break:   "break",
}

// String returns the kind's JSON name.
func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// object reports which model a kind belongs to: lease, lock or fence. A
// crash with a key belongs to that key's lock; one without joins every
// lock and fence (see partitions): a process's death frees both.
func (k Kind) object() object {
	switch k {
	case Enter, Leave:
		return fenceObject
	case Lock, Unlock, Crash:
		return lockObject
	}
	return leaseObject
}

// MarshalText encodes k by name; an unknown kind is an error.
func (k Kind) MarshalText() ([]byte, error) {
	if k == 0 || int(k) >= len(kindNames) {
		return nil, fmt.Errorf("linearizability: unknown kind %d", uint8(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText decodes a kind's name.
func (k *Kind) UnmarshalText(b []byte) error {
	for i, n := range kindNames {
		if i > 0 && n == string(b) {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("linearizability: unknown kind %q", b)
}

// Status is what an operation's caller learnt of its outcome.
type Status uint8

// The statuses. The zero Status is Unknown, so that an operation nobody
// finished is never mistaken for a known outcome.
const (
	// Unknown: the outcome is not known (the call failed in a way that
	// does not say whether it took effect). The model takes the operation
	// as possibly done at any moment after its call, or never.
	Unknown Status = iota
	// OK: the operation took effect. Acquire got generation Output.Gen,
	// Write was accepted, Read returned Output.Value, Release wrote its
	// tombstone, Break wrote its tombstone over generation Output.Gen,
	// Lock got the lock, Unlock gave it back.
	OK
	// Refused: the operation was refused and changed nothing. Acquire
	// found the lease held, Write was refused (a refusal is always
	// allowed), Release found the record moved on, Lock found the lock
	// held.
	Refused
	// Done: the operation returned without saying whether it took
	// effect, as Lease.Close does: it took effect if it could at its
	// linearization point (a Release: the record held its token).
	Done
)

var statusNames = [...]string{Unknown: "unknown", OK: "ok", Refused: "refused", Done: "done"}

// String returns the status's JSON name.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// MarshalText encodes s by name; an unknown status is an error.
func (s Status) MarshalText() ([]byte, error) {
	if int(s) >= len(statusNames) {
		return nil, fmt.Errorf("linearizability: unknown status %d", uint8(s))
	}
	return []byte(statusNames[s]), nil
}

// UnmarshalText decodes a status's name.
func (s *Status) UnmarshalText(b []byte) error {
	for i, n := range statusNames {
		if n == string(b) {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("linearizability: unknown status %q", b)
}

// Input is an operation's argument: the token of Release and Write, the
// value of Write. Other kinds leave it zero.
type Input struct {
	Token uint64 `json:"token,omitempty"`
	Value string `json:"value,omitempty"`
}

// Output is an operation's result: its Status, the generation an Acquire
// got, the value a Read returned, and, for Status Unknown, why the
// outcome is not known.
type Output struct {
	Status Status `json:"status"`
	Gen    uint64 `json:"gen,omitempty"`
	Value  string `json:"value,omitempty"`
	// Reason is, for Status Unknown, the recorder's word for why the
	// outcome is not known ("timeout", "store error"): a failing run's
	// reader needs it, the check does not (any reason leaves both
	// outcomes possible), so the models ignore it.
	Reason string `json:"reason,omitempty"`
}
