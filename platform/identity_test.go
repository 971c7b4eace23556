package platform

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

var sampleIdentity = Identity{
	Host:         "build-7",
	BootID:       "3f2c7a1e-9d4b-4c8e-a6f0-5b1d2e7c9a40",
	PID:          4242,
	StartTime:    123456789,
	PIDNamespace: 4026531836,
}

func TestIdentityJSONFieldNames(t *testing.T) {
	noNS := sampleIdentity
	noNS.PIDNamespace = 0
	tests := []struct {
		id   Identity
		want string
	}{
		{sampleIdentity, `{"host":"build-7","bootId":"3f2c7a1e-9d4b-4c8e-a6f0-5b1d2e7c9a40","pid":4242,"startTime":123456789,"pidNamespace":4026531836}`},
		{noNS, `{"host":"build-7","bootId":"3f2c7a1e-9d4b-4c8e-a6f0-5b1d2e7c9a40","pid":4242,"startTime":123456789}`},
		{Identity{BootID: "b", PID: 1, StartTime: 1}, `{"host":"","bootId":"b","pid":1,"startTime":1}`},
		{Identity{BootID: "b", PID: 1, StartTime: 1<<64 - 1}, `{"host":"","bootId":"b","pid":1,"startTime":18446744073709551615}`},
	}
	for _, tt := range tests {
		if got := string(tt.id.Marshal()); got != tt.want {
			t.Errorf("Marshal() =\n%s\nwant\n%s", got, tt.want)
		}
		if std, err := json.Marshal(tt.id); err != nil || string(std) != tt.want {
			t.Errorf("json.Marshal = %s, %v; want %s", std, err, tt.want)
		}
	}
}

// TestMarshalIsJSONMarshal: Marshal writes what json.Marshal writes,
// whether it writes it itself (strings that need no escape) or not.
func TestMarshalIsJSONMarshal(t *testing.T) {
	if n := reflect.TypeFor[Identity]().NumField(); n != 5 {
		t.Fatalf("Identity has %d fields; Marshal writes five: teach it the new ones", n)
	}
	strs := []string{"", "build-7", "3f2c7a1e-9d4b-4c8e-a6f0-5b1d2e7c9a40", "h\u00e9", "a\"b", `a\b`, "a<b>&c",
		"\x00", "\x1f", " ", "~", "\x7f", "\xff", "\u2028", "\u2029", "\ufffd", "a b", "host.example.org"}
	for _, host := range strs {
		for _, boot := range strs {
			for _, nums := range [][3]uint64{{1, 1, 0}, {4242, 123456789, 4026531836}, {1<<31 - 1, 1<<64 - 1, 1<<64 - 1}, {0, 0, 0}} {
				id := Identity{Host: host, BootID: boot, PID: int(nums[0]), StartTime: nums[1], PIDNamespace: nums[2]}
				want, err := json.Marshal(id)
				if err != nil {
					t.Fatal(err)
				}
				if got := id.Marshal(); string(got) != string(want) {
					t.Errorf("Marshal(%+v) =\n%s\nwant\n%s", id, got, want)
				}
			}
		}
	}
	if id := (Identity{PID: -1}); string(id.Marshal()) != `{"host":"","bootId":"","pid":-1,"startTime":0}` {
		t.Errorf("Marshal(%+v) = %s", id, id.Marshal())
	}
	for c := range 256 {
		s := string([]byte{byte(c)})
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, but json.Marshal writes %s", s, got, want)
		}
	}
}

func TestIdentityRoundTrip(t *testing.T) {
	noNS := sampleIdentity
	noNS.PIDNamespace = 0
	odd := Identity{Host: "h\u00e9\"\\\n<>", BootID: "x", PID: 1<<31 - 1, StartTime: 1<<64 - 1, PIDNamespace: 1<<64 - 1}
	for _, id := range []Identity{sampleIdentity, noNS, odd} {
		got, err := ParseIdentity(id.Marshal())
		if err != nil || got != id {
			t.Errorf("ParseIdentity(Marshal(%+v)) = %+v, %v", id, got, err)
		}
	}
}

func TestParseIdentityAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"unknown fields", `{"host":"build-7","bootId":"3f2c7a1e-9d4b-4c8e-a6f0-5b1d2e7c9a40","pid":4242,"startTime":123456789,"pidNamespace":4026531836,"future":{"nested":[1,"x",null]},"version":3}`},
		{"other order, spaces", " \n{ \"pidNamespace\" : 4026531836, \"startTime\":123456789, \"pid\":4242, \"bootId\":\"3f2c7a1e-9d4b-4c8e-a6f0-5b1d2e7c9a40\", \"host\":\"build-7\" }\n"},
		{"at the size limit", padTo(`{"host":"build-7","bootId":"3f2c7a1e-9d4b-4c8e-a6f0-5b1d2e7c9a40","pid":4242,"startTime":123456789,"pidNamespace":4026531836}`, MaxIdentityJSON)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseIdentity([]byte(tt.in))
			if err != nil || got != sampleIdentity {
				t.Errorf("ParseIdentity = %+v, %v; want %+v", got, err, sampleIdentity)
			}
		})
	}
}

// padTo appends spaces to s until it is n bytes long.
func padTo(s string, n int) string { return s + strings.Repeat(" ", n-len(s)) }

func TestParseIdentityRejects(t *testing.T) {
	const valid = `{"host":"h","bootId":"b","pid":5,"startTime":9}`
	tests := []struct {
		name      string
		in        string
		wantField string // "" for the document as a whole
		reason    string
	}{
		{"empty", "", "", "empty"},
		{"blank", " \n\t", "", "empty"},
		{"not JSON", "pid 5 on h", "", "not a JSON object"},
		{"truncated", `{"host":"h","bootId":"b"`, "", "not a JSON object"},
		{"array", `[1,2]`, "", "wrong type"},
		{"string", `"pid 5"`, "", "wrong type"},
		{"number", `5`, "", "wrong type"},
		{"empty object", `{}`, "bootId", "missing"},
		{"host not a string", `{"host":1,"bootId":"b","pid":5,"startTime":9}`, "host", "wrong type"},
		{"bootId not a string", `{"host":"h","bootId":7,"pid":5,"startTime":9}`, "bootId", "wrong type"},
		{"pid a string", `{"host":"h","bootId":"b","pid":"5","startTime":9}`, "pid", "wrong type"},
		{"pid a fraction", `{"host":"h","bootId":"b","pid":5.5,"startTime":9}`, "pid", "wrong type"},
		{"pid overflows int", `{"host":"h","bootId":"b","pid":1e30,"startTime":9}`, "pid", "wrong type"},
		{"startTime negative", `{"host":"h","bootId":"b","pid":5,"startTime":-9}`, "startTime", "wrong type"},
		{"startTime a string", `{"host":"h","bootId":"b","pid":5,"startTime":"9"}`, "startTime", "wrong type"},
		{"pidNamespace a string", `{"host":"h","bootId":"b","pid":5,"startTime":9,"pidNamespace":"x"}`, "pidNamespace", "wrong type"},
		{"trailing object", valid + valid, "", "trailing"},
		{"trailing word", valid + " x", "", "trailing"},
		{"trailing brace", valid + "}", "", "trailing"},
		{"trailing bracket", valid + "]", "", "trailing"},
		{"pid zero", `{"host":"h","bootId":"b","pid":0,"startTime":9}`, "pid", "not a process id"},
		{"pid negative", `{"host":"h","bootId":"b","pid":-5,"startTime":9}`, "pid", "not a process id"},
		{"pid missing", `{"host":"h","bootId":"b","startTime":9}`, "pid", "not a process id"},
		{"pid beyond pid_t", `{"host":"h","bootId":"b","pid":4294967297,"startTime":9}`, "pid", "not a process id"},
		{"bootId missing", `{"host":"h","pid":5,"startTime":9}`, "bootId", "missing"},
		{"bootId empty", `{"host":"h","bootId":"","pid":5,"startTime":9}`, "bootId", "missing"},
		{"startTime missing", `{"host":"h","bootId":"b","pid":5}`, "startTime", "missing"},
		{"startTime zero", `{"host":"h","bootId":"b","pid":5,"startTime":0}`, "startTime", "missing"},
		{"too large", padTo(valid, MaxIdentityJSON+1), "", "more than 4096"},
		{"huge", `{"host":"` + strings.Repeat("h", 1<<20) + `","bootId":"b","pid":5,"startTime":9}`, "", "more than 4096"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseIdentity([]byte(tt.in))
			var ie *IdentityError
			if !errors.As(err, &ie) {
				t.Fatalf("ParseIdentity = %+v, %v; want an *IdentityError", got, err)
			}
			if got != (Identity{}) {
				t.Errorf("failed ParseIdentity returned %+v, want the zero Identity", got)
			}
			if ie.Field != tt.wantField || !strings.Contains(ie.Reason, tt.reason) {
				t.Errorf("error field %q reason %q, want field %q reason containing %q", ie.Field, ie.Reason, tt.wantField, tt.reason)
			}
			if tt.wantField != "" && !strings.Contains(err.Error(), strconv.Quote(tt.wantField)) {
				t.Errorf("message %q does not name field %q", err, tt.wantField)
			}
		})
	}
}

// TestIdentityErrorOffset: a decoding error says where in the document it is.
func TestIdentityErrorOffset(t *testing.T) {
	for _, tt := range []struct {
		in     string
		offset int
		msg    string
	}{
		{`{"host":"h","bootId":"b","pid":"5","startTime":9}`, strings.Index(`{"host":"h","bootId":"b","pid":"5","startTime":9}`, `"5"`), "want int, got string"},
		{`{"pid":5.5}`, 7, "want int, got number 5.5"},
		{`[1]`, 0, "want object, got array"},
		{`pid 5`, 0, "invalid character 'p' looking for beginning of value"},
		{`{"pid":5`, 8, "unexpected end of JSON input"},
		{`{"pid":5,}`, 9, "invalid character '}' looking for beginning of object key string"},
	} {
		_, err := ParseIdentity([]byte(tt.in))
		var je *identityJSONError
		if !errors.As(err, &je) || je.Offset != tt.offset || je.Msg != tt.msg {
			t.Errorf("ParseIdentity(%s) = %v; want the error %q at offset %d", tt.in, err, tt.msg, tt.offset)
			continue
		}
		if want := "offset " + strconv.Itoa(tt.offset) + ": " + tt.msg; !strings.HasSuffix(err.Error(), want) {
			t.Errorf("message %q does not end in %q", err, want)
		}
	}
}

func TestIdentityErrorMessage(t *testing.T) {
	tests := []struct {
		err  *IdentityError
		want string
	}{
		{&IdentityError{Reason: "empty"}, "platform: invalid process identity: empty"},
		{&IdentityError{Field: "pid", Reason: "0 is not a process id"}, `platform: invalid process identity field "pid": 0 is not a process id`},
		{&IdentityError{Field: "host", Reason: "wrong type", Err: errors.New("cause")}, `platform: invalid process identity field "host": wrong type: cause`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestIdentityValidate(t *testing.T) {
	if err := sampleIdentity.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v", sampleIdentity, err)
	}
	noHost := sampleIdentity
	noHost.Host = ""
	if err := noHost.Validate(); err != nil {
		t.Errorf("the host is for people to read; Validate without it = %v", err)
	}
	// The longest host and boot id still marshal to a form ParseIdentity
	// reads back, even with every byte escaped; one byte more is refused.
	longest := sampleIdentity
	longest.Host, longest.BootID = strings.Repeat("\x01", maxHostLen), strings.Repeat("\x01", maxBootIDLen)
	if got, err := ParseIdentity(longest.Marshal()); err != nil || got != longest {
		t.Errorf("the longest identity does not round-trip: %v", err)
	}
	for field, id := range map[string]Identity{
		"host":   {Host: longest.Host + "h", BootID: "b", PID: 1, StartTime: 1},
		"bootId": {BootID: longest.BootID + "b", PID: 1, StartTime: 1},
	} {
		var ie *IdentityError
		if err := id.Validate(); !errors.As(err, &ie) || ie.Field != field {
			t.Errorf("Validate with a %s one byte too long = %v, want an *IdentityError of it", field, err)
		}
	}
}

func TestSameProcessTable(t *testing.T) {
	a := Identity{Host: "a", BootID: "boot-1", PID: 10, StartTime: 100, PIDNamespace: 5}
	with := func(f func(*Identity)) Identity { id := a; f(&id); return id }
	tests := []struct {
		name string
		b    Identity
		want bool
	}{
		{"itself", a, true},
		{"another process", with(func(id *Identity) { id.PID, id.StartTime = 11, 200 }), true},
		{"renamed host", with(func(id *Identity) { id.Host = "b" }), true},
		{"another boot", with(func(id *Identity) { id.BootID = "boot-2" }), false},
		{"another pid namespace", with(func(id *Identity) { id.PIDNamespace = 6 }), false},
		{"no namespace recorded", with(func(id *Identity) { id.PIDNamespace = 0 }), false},
	}
	for _, tt := range tests {
		if got := a.SameProcessTable(tt.b); got != tt.want {
			t.Errorf("%s: SameProcessTable = %v, want %v", tt.name, got, tt.want)
		}
		if got := tt.b.SameProcessTable(a); got != tt.want {
			t.Errorf("%s: SameProcessTable is not symmetric", tt.name)
		}
	}
	darwin := Identity{BootID: "x", PID: 1, StartTime: 1}
	if !darwin.SameProcessTable(Identity{BootID: "x", PID: 2, StartTime: 2}) {
		t.Error("identities without pid namespaces (darwin) of one boot must share a table")
	}
}

func TestIdentityString(t *testing.T) {
	tests := []struct {
		id   Identity
		want string
	}{
		{sampleIdentity, "pid 4242 on build-7 (boot 3f2c7a1e, start 123456789)"},
		{Identity{BootID: "short", PID: 1, StartTime: 2}, "pid 1 on unknown host (boot short, start 2)"},
		{Identity{Host: "h", BootID: "12345678", PID: 3, StartTime: 4}, "pid 3 on h (boot 12345678, start 4)"},
	}
	for _, tt := range tests {
		if got := tt.id.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// FuzzParseIdentity checks what lock stamps and lease records get from a
// stored identity, whatever the bytes: no panic, every failure an
// *IdentityError, and every identity it accepts valid and written back
// by Marshal as one that parses to itself.
func FuzzParseIdentity(f *testing.F) {
	for _, seed := range []string{
		`{"host":"h","bootId":"b","pid":42,"startTime":7,"pidNamespace":4026531836}`,
		`{"host":"h","bootId":"b","pid":42,"startTime":7}` + "\n",
		`{"bootId":"b","pid":2147483648,"startTime":7}`,
		`{"bootId":"b","pid":"42","startTime":7}`,
		`{"bootId":"b","pid":42,"startTime":7}}`,
		`{"bootId":"b","pid":4.2e1,"startTime":7,"extra":[1,{"a":null}]}`,
		`{"host":"\u00e9\ud800","bootId":"\u0000","pid":1,"startTime":18446744073709551615}`,
		``, `null`, `[]`, `{}`, "\x00\xff",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := ParseIdentity(data)
		if err != nil {
			var ie *IdentityError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T) is not an *IdentityError", err, err)
			}
			if id != (Identity{}) {
				t.Fatalf("failed with a non-zero identity %+v", id)
			}
			return
		}
		if err := id.Validate(); err != nil {
			t.Fatalf("accepted an invalid identity %+v: %v", id, err)
		}
		again, err := ParseIdentity(id.Marshal())
		if err != nil || again != id {
			t.Fatalf("%+v written back parses as %+v, %v", id, again, err)
		}
	})
}

// TestPrintable: what reaches a terminal has no control characters.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"host-1.example": "host-1.example",
		"hôte":           "hôte",
		"\x1b[31mred":    `"\x1b[31mred"`,
		"a\nb":           `"a\nb"`,
		"bad\xff":        `"bad\xff"`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %s, want %s", in, got, want)
		}
	}
	id := Identity{Host: "\x1b]0;owned\x07", BootID: "b", PID: 1}
	if s := id.String(); strings.ContainsAny(s, "\x1b\x07") {
		t.Errorf("Identity.String() = %q, holds control characters", s)
	}
}
