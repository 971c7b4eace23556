package platform

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// Identity names one process for as long as it lives, and never another.
//
// Its JSON form is stable: lock stamps and lease records store it, and
// other versions of collab read it.
type Identity struct {
	// Host is the host name, for people to read. It is not used to
	// judge liveness: a renamed host still judges its own holders.
	Host string `json:"host"`
	// BootID is random per boot of a kernel (Linux: boot_id; darwin:
	// kern.bootsessionuuid). Equal boot ids mean one running kernel.
	BootID string `json:"bootId"`
	// PID is the process id within PIDNamespace. Always > 0.
	PID int `json:"pid"`
	// StartTime tells apart processes that reuse a pid: on Linux the
	// start time in clock ticks since boot (field 22 of /proc/<pid>/stat),
	// on darwin microseconds since the Unix epoch. Always > 0.
	StartTime uint64 `json:"startTime"`
	// PIDNamespace is the inode of the pid namespace on Linux, 0 elsewhere.
	PIDNamespace uint64 `json:"pidNamespace,omitempty"`
}

// maxPID is the largest pid a kernel accepts: kill(2) and sysctl take a
// 32-bit pid_t, and would truncate a larger one to another process's.
const maxPID = 1<<31 - 1

// MaxIdentityJSON bounds what ParseIdentity reads, so that a garbage stamp
// cannot make it allocate without limit.
const MaxIdentityJSON = 4096

// IdentityError reports a stored identity that cannot be used.
type IdentityError struct {
	Field  string // the offending JSON field, or "" for the document
	Reason string
	Err    error // the underlying decoding error, with its offset, if any
}

func (e *IdentityError) Error() string {
	msg := "platform: invalid process identity"
	if e.Field != "" {
		msg += " field " + strconv.Quote(e.Field)
	}
	msg += ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *IdentityError) Unwrap() error { return e.Err }

// ParseIdentity decodes and validates the JSON form of an identity. It
// fails with an *IdentityError on anything but one valid identity object;
// unknown fields are ignored so that newer writers stay readable. It
// reads what encoding/json's Decoder reads into an Identity, and fails
// where it fails.
func ParseIdentity(data []byte) (Identity, error) {
	if len(data) > MaxIdentityJSON {
		return Identity{}, &IdentityError{Reason: strconv.Itoa(len(data)) + " bytes, more than " + strconv.Itoa(MaxIdentityJSON)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Identity{}, &IdentityError{Reason: "empty"}
	}
	id, end, err := decodeIdentity(data)
	if err != nil {
		return Identity{}, err
	}
	// bytes.TrimSpace, not JSON's white space: this is the test stamps
	// have always passed.
	if len(bytes.TrimSpace(data[end:])) > 0 {
		return Identity{}, &IdentityError{Reason: "trailing data after the object"}
	}
	if err := id.Validate(); err != nil {
		return Identity{}, err
	}
	return id, nil
}

// The longest host name and boot id an identity holds: a host name has
// at most 255 bytes (DNS), a boot id is a UUID. They bound the JSON form,
// so that every valid identity is one ParseIdentity reads back.
const (
	maxHostLen   = 255
	maxBootIDLen = 128
)

// Validate reports the first field that makes id unusable for judging,
// or too long to store.
func (id Identity) Validate() error {
	switch {
	case len(id.Host) > maxHostLen:
		return &IdentityError{Field: "host", Reason: strconv.Itoa(len(id.Host)) + " bytes, more than " + strconv.Itoa(maxHostLen)}
	case id.BootID == "":
		return &IdentityError{Field: "bootId", Reason: "missing"}
	case len(id.BootID) > maxBootIDLen:
		return &IdentityError{Field: "bootId", Reason: strconv.Itoa(len(id.BootID)) + " bytes, more than " + strconv.Itoa(maxBootIDLen)}
	case id.PID <= 0 || id.PID > maxPID:
		return &IdentityError{Field: "pid", Reason: strconv.Itoa(id.PID) + " is not a process id"}
	case id.StartTime == 0:
		return &IdentityError{Field: "startTime", Reason: "missing"}
	}
	return nil
}

// Marshal returns the stable JSON form of id: what json.Marshal writes,
// escapes included, without encoding/json.
func (id Identity) Marshal() []byte {
	b := make([]byte, 0, len(identityJSONWords)+len(id.Host)+len(id.BootID)+3*20)
	b = append(b, `{"host":`...)
	b = appendJSONString(b, id.Host)
	b = append(b, `,"bootId":`...)
	b = appendJSONString(b, id.BootID)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(id.PID), 10)
	b = append(b, `,"startTime":`...)
	b = strconv.AppendUint(b, id.StartTime, 10)
	if id.PIDNamespace != 0 {
		b = append(b, `,"pidNamespace":`...)
		b = strconv.AppendUint(b, id.PIDNamespace, 10)
	}
	return append(b, '}')
}

// identityJSONWords is what Marshal writes besides the values.
const identityJSONWords = `{"host":"","bootId":"","pid":,"startTime":,"pidNamespace":}`

// SameProcessTable reports whether id and other live under one kernel boot
// and pid namespace, so that one's pid means the same process to the other.
func (id Identity) SameProcessTable(other Identity) bool {
	return id.BootID == other.BootID && id.PIDNamespace == other.PIDNamespace
}

// String returns a short form for logs and errors.
func (id Identity) String() string {
	return "pid " + strconv.Itoa(id.PID) + " on " + hostOrUnknown(id.Host) + " (boot " + Printable(shortBoot(id.BootID)) + ", start " + strconv.FormatUint(id.StartTime, 10) + ")"
}

func hostOrUnknown(h string) string {
	if h == "" {
		return "unknown host"
	}
	return Printable(h)
}

// Printable returns s as it may reach a terminal: unchanged if every
// character is graphic (no control characters, no escape sequences), else
// quoted with Go's escapes. Stamps and keys come from files other users
// can write; what prints them prints this.
func Printable(s string) string {
	for _, r := range s {
		if !strconv.IsGraphic(r) || r == utf8.RuneError {
			return strconv.Quote(s)
		}
	}
	return s
}

func shortBoot(b string) string {
	if len(b) > 8 {
		return b[:8]
	}
	return b
}
