package platform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// parseIdentityWithJSON is ParseIdentity as it was with encoding/json:
// the oracle that the hand-written decoder must agree with.
func parseIdentityWithJSON(data []byte) (Identity, error) {
	if len(data) > MaxIdentityJSON {
		return Identity{}, &IdentityError{Reason: fmt.Sprintf("%d bytes, more than %d", len(data), MaxIdentityJSON)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Identity{}, &IdentityError{Reason: "empty"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var id Identity
	if err := dec.Decode(&id); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return Identity{}, &IdentityError{Field: typeErr.Field, Reason: "wrong type", Err: err}
		}
		return Identity{}, &IdentityError{Reason: "not a JSON object", Err: err}
	}
	if len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		return Identity{}, &IdentityError{Reason: "trailing data after the object"}
	}
	if err := id.Validate(); err != nil {
		return Identity{}, err
	}
	return id, nil
}

// checkParseMatchesJSON fails t unless ParseIdentity and the oracle agree
// on data: both accept it as one Identity, or both refuse it with the
// same field and reason.
func checkParseMatchesJSON(t *testing.T, data []byte) {
	t.Helper()
	got, err := ParseIdentity(data)
	want, wantErr := parseIdentityWithJSON(data)
	if got != want {
		t.Fatalf("ParseIdentity(%q) = %+v, %v;\nencoding/json: %+v, %v", data, got, err, want, wantErr)
	}
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("ParseIdentity(%q) error = %v; encoding/json: %v", data, err, wantErr)
	}
	if err == nil {
		return
	}
	var ie, wantIE *IdentityError
	if !errors.As(err, &ie) || !errors.As(wantErr, &wantIE) {
		t.Fatalf("ParseIdentity(%q) error = %v (%T); want an *IdentityError like %v", data, err, err, wantErr)
	}
	if ie.Field != wantIE.Field || ie.Reason != wantIE.Reason {
		t.Fatalf("ParseIdentity(%q) error field %q reason %q;\nencoding/json: field %q reason %q (%v)", data, ie.Field, ie.Reason, wantIE.Field, wantIE.Reason, wantErr)
	}
}

const validRest = `"bootId":"b","pid":5,"startTime":9}`

// trickyIdentities are documents where a decoder may part from
// encoding/json. want is the identity read, or field and reason say why
// none is.
var trickyIdentities = []struct {
	name   string
	in     string
	want   Identity
	field  string
	reason string
}{
	// Keys.
	{name: "keys in other case", in: `{"HOST":"h","BOOTID":"b","Pid":5,"STARTtime":9,"pidnamespace":3}`, want: Identity{Host: "h", BootID: "b", PID: 5, StartTime: 9, PIDNamespace: 3}},
	{name: "key by escapes", in: `{"\u0068ost":"h","boot\u0049d":"b","pid":5,"startTime":9}`, want: Identity{Host: "h", BootID: "b", PID: 5, StartTime: 9}},
	{name: "long s folds to s", in: `{"ho\u017ft":"h",` + validRest, want: Identity{Host: "h", BootID: "b", PID: 5, StartTime: 9}},
	{name: "long s in UTF-8", in: `{"hoſt":"h",` + validRest, want: Identity{Host: "h", BootID: "b", PID: 5, StartTime: 9}},
	{name: "dotless i does not fold to i", in: `{"bootıd":"x",` + validRest, want: Identity{BootID: "b", PID: 5, StartTime: 9}},
	{name: "dotted I does not fold to I", in: `{"bootİd":"x","BOOTİD":"y",` + validRest, want: Identity{BootID: "b", PID: 5, StartTime: 9}},
	{name: "Kelvin sign is no key here", in: `{"\u212a":1,` + validRest, want: Identity{BootID: "b", PID: 5, StartTime: 9}},
	{name: "key with invalid UTF-8", in: "{\"ho\xffst\":\"h\"," + validRest, want: Identity{BootID: "b", PID: 5, StartTime: 9}},
	{name: "empty key", in: `{"":1,` + validRest, want: Identity{BootID: "b", PID: 5, StartTime: 9}},
	{name: "last duplicate wins", in: `{"pid":4,` + validRest[:len(validRest)-1] + `,"PID":6}`, want: Identity{BootID: "b", PID: 6, StartTime: 9}},
	{name: "null leaves a field", in: `{"host":"h",` + validRest[:len(validRest)-1] + `,"pid":null,"host":null,"pidNamespace":null}`, want: Identity{Host: "h", BootID: "b", PID: 5, StartTime: 9}},
	{name: "wrong type in other case", in: `{"PID":"5","bootId":"b","startTime":9}`, field: "pid", reason: "wrong type"},
	{name: "first wrong type wins", in: `{"startTime":"9","pid":"5","bootId":"b"}`, field: "startTime", reason: "wrong type"},
	{name: "wrong type then right", in: `{"pid":"5","pid":5,"bootId":"b","startTime":9}`, field: "pid", reason: "wrong type"},
	{name: "wrong type then bad syntax", in: `{"pid":"5","bootId":"b","startTime":9,}`, reason: "not a JSON object"},
	{name: "wrong type then trailing", in: `{"pid":"5","bootId":"b","startTime":9} x`, field: "pid", reason: "wrong type"},
	{name: "wrong type in unknown key", in: `{"PIDs":"5",` + validRest, want: Identity{BootID: "b", PID: 5, StartTime: 9}},

	// Values of the wrong type.
	{name: "host true", in: `{"host":true,` + validRest, field: "host", reason: "wrong type"},
	{name: "host an object", in: `{"host":{"a":1},` + validRest, field: "host", reason: "wrong type"},
	{name: "bootId an array", in: `{"bootId":["b"],"pid":5,"startTime":9}`, field: "bootId", reason: "wrong type"},
	{name: "pid false", in: `{"pid":false,"bootId":"b","startTime":9}`, field: "pid", reason: "wrong type"},
	{name: "pidNamespace an object", in: `{"pidNamespace":{},` + validRest, field: "pidNamespace", reason: "wrong type"},

	// Numbers.
	{name: "pid with exponent", in: `{"bootId":"b","pid":5e0,"startTime":9}`, field: "pid", reason: "wrong type"},
	{name: "pid 5.0", in: `{"bootId":"b","pid":5.0,"startTime":9}`, field: "pid", reason: "wrong type"},
	{name: "pid -0", in: `{"bootId":"b","pid":-0,"startTime":9}`, field: "pid", reason: "not a process id"},
	{name: "pid the largest int64", in: `{"bootId":"b","pid":9223372036854775807,"startTime":9}`, field: "pid", reason: "not a process id"},
	{name: "pid beyond int64", in: `{"bootId":"b","pid":9223372036854775808,"startTime":9}`, field: "pid", reason: "wrong type"},
	{name: "pid the smallest int64", in: `{"bootId":"b","pid":-9223372036854775808,"startTime":9}`, field: "pid", reason: "not a process id"},
	{name: "startTime -0", in: `{"bootId":"b","pid":5,"startTime":-0}`, field: "startTime", reason: "wrong type"},
	{name: "startTime the largest uint64", in: `{"bootId":"b","pid":5,"startTime":18446744073709551615}`, want: Identity{BootID: "b", PID: 5, StartTime: 1<<64 - 1}},
	{name: "startTime beyond uint64", in: `{"bootId":"b","pid":5,"startTime":18446744073709551616}`, field: "startTime", reason: "wrong type"},
	{name: "leading zero", in: `{"bootId":"b","pid":05,"startTime":9}`, reason: "not a JSON object"},
	{name: "bare minus", in: `{"bootId":"b","pid":-,"startTime":9}`, reason: "not a JSON object"},
	{name: "plus sign", in: `{"bootId":"b","pid":+5,"startTime":9}`, reason: "not a JSON object"},
	{name: "dot without digits", in: `{"bootId":"b","pid":5.,"startTime":9}`, reason: "not a JSON object"},
	{name: "exponent without digits", in: `{"bootId":"b","pid":5e+,"startTime":9}`, reason: "not a JSON object"},
	{name: "odd numbers in an unknown key", in: `{"n":[-0.0e-0,1E+9,123456789012345678901234567890e400],` + validRest, want: Identity{BootID: "b", PID: 5, StartTime: 9}},

	// Strings.
	{name: "escapes", in: `{"host":"\"\\\/\b\f\n\r\t\u00e9\u0000",` + validRest, want: Identity{Host: "\"\\/\b\f\n\r\té\x00", BootID: "b", PID: 5, StartTime: 9}},
	{name: "surrogate pair", in: `{"host":"\ud83d\ude00",` + validRest, want: Identity{Host: "😀", BootID: "b", PID: 5, StartTime: 9}},
	{name: "upper-case hex", in: `{"host":"\uD83D\uDE00\u00E9",` + validRest, want: Identity{Host: "😀é", BootID: "b", PID: 5, StartTime: 9}},
	{name: "lone high surrogate", in: `{"host":"\ud800x",` + validRest, want: Identity{Host: "\ufffdx", BootID: "b", PID: 5, StartTime: 9}},
	{name: "lone low surrogate", in: `{"host":"\udc00",` + validRest, want: Identity{Host: "\ufffd", BootID: "b", PID: 5, StartTime: 9}},
	{name: "reversed pair", in: `{"host":"\udc00\ud800",` + validRest, want: Identity{Host: "\ufffd\ufffd", BootID: "b", PID: 5, StartTime: 9}},
	{name: "high then letter", in: `{"host":"\ud800\u0041",` + validRest, want: Identity{Host: "\ufffdA", BootID: "b", PID: 5, StartTime: 9}},
	{name: "high, high, low", in: `{"host":"\ud800\ud800\udc00",` + validRest, want: Identity{Host: "\ufffd\U00010000", BootID: "b", PID: 5, StartTime: 9}},
	{name: "high then short escape", in: `{"host":"\ud800\n",` + validRest, want: Identity{Host: "\ufffd\n", BootID: "b", PID: 5, StartTime: 9}},
	{name: "invalid UTF-8", in: "{\"host\":\"a\xffb\xc3\",\"bootId\":\"\xed\xa0\x80\",\"pid\":5,\"startTime\":9}", want: Identity{Host: "a\ufffdb\ufffd", BootID: "\ufffd\ufffd\ufffd", PID: 5, StartTime: 9}},
	{name: "DEL and U+2028", in: "{\"host\":\"\x7f\u2028\"," + validRest, want: Identity{Host: "\x7f\u2028", BootID: "b", PID: 5, StartTime: 9}},
	{name: "raw control character", in: "{\"host\":\"a\tb\"," + validRest, reason: "not a JSON object"},
	{name: "single-quote escape", in: `{"host":"\'",` + validRest, reason: "not a JSON object"},
	{name: "unknown escape", in: `{"host":"\x41",` + validRest, reason: "not a JSON object"},
	{name: "short \\u", in: `{"host":"\u12",` + validRest, reason: "not a JSON object"},
	{name: "bad hex after high surrogate", in: `{"host":"\ud800\u12G4",` + validRest, reason: "not a JSON object"},
	{name: "bad escape in unknown key", in: `{"x":"\q",` + validRest, reason: "not a JSON object"},
	{name: "unterminated string", in: `{"host":"h`, reason: "not a JSON object"},

	// Syntax of objects and arrays.
	{name: "nested unknown", in: `{"future":{"a":[1,{"b":null},[],{}],"c":"\u00e9","d":true},` + validRest, want: Identity{BootID: "b", PID: 5, StartTime: 9}},
	{name: "deeply nested unknown", in: `{"x":` + strings.Repeat("[", 1500) + strings.Repeat("]", 1500) + "," + validRest, want: Identity{BootID: "b", PID: 5, StartTime: 9}},
	{name: "trailing comma in object", in: `{` + validRest[:len(validRest)-1] + `,}`, reason: "not a JSON object"},
	{name: "trailing comma in array", in: `{"x":[1,],` + validRest, reason: "not a JSON object"},
	{name: "unbalanced array", in: `{"x":[1},` + validRest, reason: "not a JSON object"},
	{name: "key not a string", in: `{pid:5}`, reason: "not a JSON object"},
	{name: "no colon", in: `{"pid" 5}`, reason: "not a JSON object"},
	{name: "lone comma", in: `{,}`, reason: "not a JSON object"},
	{name: "bad literal", in: `{"x":nul,` + validRest, reason: "not a JSON object"},
	{name: "capitalised literal", in: `{"x":True,` + validRest, reason: "not a JSON object"},

	// White space and what surrounds the object.
	{name: "JSON white space", in: "\t\r\n {\t\"pid\"\r:\n5 ,\"bootId\":\"b\",\"startTime\":9}\r\n\t ", want: Identity{BootID: "b", PID: 5, StartTime: 9}},
	{name: "vertical tab before", in: "\v{" + validRest, reason: "not a JSON object"},
	{name: "no-break space before", in: "\u00a0{" + validRest, reason: "not a JSON object"},
	{name: "byte order mark", in: "\ufeff{" + validRest, reason: "not a JSON object"},
	{name: "Unicode space after", in: "{" + validRest + "\v\f\u0085\u00a0\u2028\u3000", want: Identity{BootID: "b", PID: 5, StartTime: 9}},
	{name: "byte order mark after", in: "{" + validRest + "\ufeff", reason: "trailing data after the object"},
	{name: "NUL after", in: "{" + validRest + "\x00", reason: "trailing data after the object"},
	{name: "only Unicode space", in: "\u00a0\u3000", reason: "empty"},

	// Documents that are no object.
	{name: "null", in: `null`, field: "bootId", reason: "missing"},
	{name: "null and space", in: " null \v", field: "bootId", reason: "missing"},
	{name: "null then a word", in: `null x`, reason: "trailing data after the object"},
	{name: "null run on", in: `nullx`, reason: "trailing data after the object"},
	{name: "truncated null", in: `nul`, reason: "not a JSON object"},
	{name: "true", in: `true`, reason: "wrong type"},
	{name: "false run on", in: `falsex`, reason: "wrong type"},
	{name: "number run on", in: `5x`, reason: "wrong type"},
	{name: "leading zero at the top", in: `01`, reason: "wrong type"},
	{name: "negative fraction", in: `-5.5e3`, reason: "wrong type"},
	{name: "truncated number", in: `5e`, reason: "not a JSON object"},
	{name: "bad fraction at the top", in: `1.x`, reason: "not a JSON object"},
	{name: "string then junk", in: `"s"}`, reason: "wrong type"},
	{name: "array then junk", in: `[1,{"a":2}]]`, reason: "wrong type"},
	{name: "bad array", in: `[1,]`, reason: "not a JSON object"},
	{name: "object then object", in: `{}{}`, reason: "trailing data after the object"},
}

func TestParseIdentityTricky(t *testing.T) {
	for _, tt := range trickyIdentities {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseIdentity([]byte(tt.in))
			if tt.reason == "" {
				if err != nil || got != tt.want {
					t.Errorf("ParseIdentity(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
				}
			} else {
				var ie *IdentityError
				if !errors.As(err, &ie) || ie.Field != tt.field || !strings.Contains(ie.Reason, tt.reason) {
					t.Errorf("ParseIdentity(%q) = %+v, %v; want field %q, reason %q", tt.in, got, err, tt.field, tt.reason)
				}
			}
			checkParseMatchesJSON(t, []byte(tt.in))
		})
	}
}

// TestIdentityFieldsFolded: the folded names are what encoding/json folds
// the JSON names to, and those are Identity's tags.
func TestIdentityFieldsFolded(t *testing.T) {
	typ := reflect.TypeFor[Identity]()
	if typ.NumField() != len(identityFields) {
		t.Fatalf("Identity has %d fields, the decoder knows %d", typ.NumField(), len(identityFields))
	}
	for i, f := range identityFields {
		if name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); name != f.name {
			t.Errorf("field %d is %q in Identity, %q in the decoder", i, name, f.name)
		}
		if got := string(foldJSONKey([]byte(f.name))); got != f.folded {
			t.Errorf("%q folds to %q, not %q", f.name, got, f.folded)
		}
	}
	// The decoder recurses once per level of nesting: the size bound
	// keeps it below encoding/json's limit of 10000, which it does not
	// check.
	if MaxIdentityJSON >= 10000 {
		t.Errorf("MaxIdentityJSON = %d allows nesting deeper than encoding/json does", MaxIdentityJSON)
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", "\x00\x01\x1f\x7f", "\b\f\n\r\t", `"\/`, "<a href='x'>&amp;</a>",
		"\u2027\u2028\u2029\u202a", "\ufffd", "\xff", "a\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "é😀", "\U0010ffff"} {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, want x%s", s, got, want)
		}
	}
}

// FuzzParseIdentityMatchesJSON holds ParseIdentity to what encoding/json
// made of the same bytes.
func FuzzParseIdentityMatchesJSON(f *testing.F) {
	for _, tt := range trickyIdentities {
		f.Add([]byte(tt.in))
	}
	f.Add([]byte(`{"host":"h","bootId":"b","pid":42,"startTime":7,"pidNamespace":4026531836}`))
	f.Add(sampleIdentity.Marshal())
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParseMatchesJSON(t, data)
	})
}

// FuzzMarshalMatchesJSON holds Marshal to json.Marshal.
func FuzzMarshalMatchesJSON(f *testing.F) {
	f.Add("build-7", "3f2c7a1e-9d4b-4c8e-a6f0-5b1d2e7c9a40", 4242, uint64(123456789), uint64(4026531836))
	f.Add("", "", 0, uint64(0), uint64(0))
	f.Add("h\u00e9\"\\\n<>&", "\x00\x1f\x7f", -1, uint64(1<<64-1), uint64(1))
	f.Add("\xff\xed\xa0\x80a\xc3", "\u2028\u2029\ufffd", 1<<31-1, uint64(1), uint64(1<<64-1))
	for _, tt := range trickyIdentities {
		f.Add(tt.in, tt.want.BootID+tt.want.Host, tt.want.PID, tt.want.StartTime, tt.want.PIDNamespace)
	}
	f.Fuzz(func(t *testing.T, host, bootID string, pid int, startTime, pidNamespace uint64) {
		id := Identity{Host: host, BootID: bootID, PID: pid, StartTime: startTime, PIDNamespace: pidNamespace}
		want, err := json.Marshal(id)
		if err != nil {
			t.Fatal(err)
		}
		if got := id.Marshal(); string(got) != string(want) {
			t.Fatalf("Marshal(%+v) =\n%s\njson.Marshal:\n%s", id, got, want)
		}
	})
}
