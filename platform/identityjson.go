package platform

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The JSON form of an Identity is read and written here by hand, the way
// encoding/json's Decoder.Decode and json.Marshal do it: encoding/json
// would cost a program that only takes lock files some 530 kB. The fuzz
// tests hold both directions to encoding/json.

// identityFields are Identity's JSON names, and the same folded as
// encoding/json folds them to match keys that differ in case.
var identityFields = [...]struct{ name, folded string }{
	{"host", "HOST"},
	{"bootId", "BOOTID"},
	{"pid", "PID"},
	{"startTime", "STARTTIME"},
	{"pidNamespace", "PIDNAMESPACE"},
}

// identityJSONError is a document that is no JSON, or a value of the
// wrong type, at a byte offset into it.
type identityJSONError struct {
	Offset int
	Msg    string
}

func (e *identityJSONError) Error() string {
	return "offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// decodeIdentity reads the JSON value at the start of data into an
// Identity, as json.Decoder.Decode does, and returns where the value
// ends. Like Decode, it reads the whole value before it reports the first
// value of a wrong type: a syntax error anywhere is reported first.
func decodeIdentity(data []byte) (Identity, int, error) {
	d := identityDecoder{data: data}
	var id Identity
	d.skipSpace()
	at := d.off
	kind, _, err := d.value(&id)
	if err != nil {
		return Identity{}, 0, &IdentityError{Reason: "not a JSON object", Err: err}
	}
	if kind != '{' && kind != 'n' { // null into a struct does nothing
		d.wrongType("", at, "object", kind, nil)
	}
	if d.typeErr != nil {
		return Identity{}, 0, d.typeErr
	}
	return id, d.off, nil
}

type identityDecoder struct {
	data    []byte
	off     int
	typeErr *IdentityError // the first value of a wrong type
}

// value reads the value at d.off: an object into id (if not nil), any
// other value only checked. It returns its kind ('{', '[', '"', '0' for a
// number, 't' for true or false, 'n') and a string's or number's value.
// Recursion is bounded by MaxIdentityJSON, below encoding/json's limit
// of 10000 levels, so this needs none.
func (d *identityDecoder) value(id *Identity) (kind byte, s []byte, err error) {
	switch c := d.peek(); {
	case c == '{':
		return c, nil, d.object(id)
	case c == '[':
		return c, nil, d.array()
	case c == '"':
		s, err = d.str()
		return c, s, err
	case c == '-' || '0' <= c && c <= '9':
		s, err = d.number()
		return '0', s, err
	case c == 't':
		return 't', nil, d.literal("true")
	case c == 'f':
		return 't', nil, d.literal("false")
	case c == 'n':
		return 'n', nil, d.literal("null")
	}
	return 0, nil, d.syntaxError("looking for beginning of value")
}

func (d *identityDecoder) object(id *Identity) error {
	d.off++ // {
	d.skipSpace()
	if d.accept('}') {
		return nil
	}
	for {
		if d.peek() != '"' {
			return d.syntaxError("looking for beginning of object key string")
		}
		key, err := d.str()
		if err != nil {
			return err
		}
		d.skipSpace()
		if !d.accept(':') {
			return d.syntaxError("after object key")
		}
		d.skipSpace()
		at := d.off
		kind, s, err := d.value(nil)
		if err != nil {
			return err
		}
		if id != nil {
			d.store(id, key, at, kind, s)
		}
		d.skipSpace()
		if d.accept('}') {
			return nil
		}
		if !d.accept(',') {
			return d.syntaxError("after object key:value pair")
		}
		d.skipSpace()
	}
}

func (d *identityDecoder) array() error {
	d.off++ // [
	d.skipSpace()
	if d.accept(']') {
		return nil
	}
	for {
		if _, _, err := d.value(nil); err != nil {
			return err
		}
		d.skipSpace()
		if d.accept(']') {
			return nil
		}
		if !d.accept(',') {
			return d.syntaxError("after array element")
		}
		d.skipSpace()
	}
}

// store sets the field of id that key names to the value at offset at.
// As with encoding/json, an unknown key is ignored, null leaves the field
// as it is, a later key overrides an earlier one, and a value of the
// wrong type (a fraction or an out-of-range number included) is
// remembered, but the rest still read.
func (d *identityDecoder) store(id *Identity, key []byte, at int, kind byte, s []byte) {
	name := identityField(key)
	if name == "" || kind == 'n' {
		return
	}
	var ok bool
	var want string
	switch name {
	case "host":
		ok, want = setJSONString(&id.Host, kind, s), "string"
	case "bootId":
		ok, want = setJSONString(&id.BootID, kind, s), "string"
	case "pid":
		n, err := strconv.ParseInt(string(s), 10, strconv.IntSize)
		if ok, want = kind == '0' && err == nil, "int"; ok {
			id.PID = int(n)
		}
	case "startTime":
		ok, want = setJSONUint(&id.StartTime, kind, s), "uint64"
	case "pidNamespace":
		ok, want = setJSONUint(&id.PIDNamespace, kind, s), "uint64"
	}
	if !ok {
		d.wrongType(name, at, want, kind, s)
	}
}

func setJSONString(p *string, kind byte, s []byte) bool {
	if kind != '"' {
		return false
	}
	*p = string(s)
	return true
}

func setJSONUint(p *uint64, kind byte, s []byte) bool {
	n, err := strconv.ParseUint(string(s), 10, 64)
	if kind != '0' || err != nil {
		return false
	}
	*p = n
	return true
}

// wrongType remembers the first value of a wrong type, for field ("" for
// the document), as encoding/json names it: by its JSON name, whatever the
// case of the key.
func (d *identityDecoder) wrongType(field string, at int, want string, kind byte, s []byte) {
	if d.typeErr != nil {
		return
	}
	got := "number " + string(s)
	switch kind {
	case '{':
		got = "object"
	case '[':
		got = "array"
	case '"':
		got = "string"
	case 't':
		got = "bool"
	}
	d.typeErr = &IdentityError{Field: field, Reason: "wrong type",
		Err: &identityJSONError{Offset: at, Msg: "want " + want + ", got " + got}}
}

// identityField returns the JSON name of the field key names, or "". As
// in encoding/json, an exact match comes first, then one that differs in
// case by Unicode's simple folding (so "ſ" matches "s", "K" matches "k").
func identityField(key []byte) string {
	for _, f := range identityFields {
		if string(key) == f.name {
			return f.name
		}
	}
	folded := foldJSONKey(key)
	for _, f := range identityFields {
		if string(folded) == f.folded {
			return f.name
		}
	}
	return ""
}

// foldJSONKey maps every character of key to the smallest of those it
// folds with, as encoding/json's foldName does.
func foldJSONKey(key []byte) []byte {
	out := make([]byte, 0, len(key))
	for i := 0; i < len(key); {
		if c := key[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(key[i:])
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out
}

// str reads the string at d.off and returns its value as encoding/json
// decodes it: escapes resolved, an escaped surrogate that is not half of a
// pair and each byte of invalid UTF-8 made U+FFFD.
func (d *identityDecoder) str() ([]byte, error) {
	d.off++ // "
	var b []byte
	for {
		switch c := d.peek(); {
		case c < ' ': // a control character, or the end
			return nil, d.syntaxError("in string literal")
		case c == '"':
			d.off++
			return b, nil
		case c == '\\':
			d.off++
			if d.peek() == 'u' {
				r := d.hex4()
				if r < 0 {
					return nil, d.syntaxError("in \\u hexadecimal character escape")
				}
				if utf16.IsSurrogate(r) {
					save := d.off
					if d.accept('\\') && d.peek() == 'u' {
						if r2 := utf16.DecodeRune(r, d.hex4()); r2 != unicode.ReplacementChar {
							b = utf8.AppendRune(b, r2)
							continue
						}
					}
					d.off, r = save, unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, r)
				continue
			}
			i := strings.IndexByte(`"\/bfnrt`, d.peek())
			if i < 0 {
				return nil, d.syntaxError("in string escape code")
			}
			b = append(b, "\"\\/\b\f\n\r\t"[i])
			d.off++
		case c < utf8.RuneSelf:
			b = append(b, c)
			d.off++
		default:
			r, n := utf8.DecodeRune(d.data[d.off:])
			b = utf8.AppendRune(b, r)
			d.off += n
		}
	}
}

// hex4 reads the 'u' and four hex digits of a \u escape at d.off, or
// returns -1 and leaves d.off at the first byte that is none.
func (d *identityDecoder) hex4() rune {
	d.off++ // u
	var r rune
	for range 4 {
		c := d.peek()
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
		d.off++
	}
	return r
}

// number reads a number at d.off by JSON's grammar and returns its text.
func (d *identityDecoder) number() ([]byte, error) {
	start := d.off
	d.accept('-')
	if !d.accept('0') && d.digits() == 0 {
		return nil, d.syntaxError("in numeric literal")
	}
	if d.accept('.') && d.digits() == 0 {
		return nil, d.syntaxError("after decimal point in numeric literal")
	}
	if d.accept('e') || d.accept('E') {
		_ = d.accept('+') || d.accept('-')
		if d.digits() == 0 {
			return nil, d.syntaxError("in exponent of numeric literal")
		}
	}
	return d.data[start:d.off], nil
}

func (d *identityDecoder) digits() int {
	n := 0
	for c := d.peek(); '0' <= c && c <= '9'; c = d.peek() {
		d.off++
		n++
	}
	return n
}

func (d *identityDecoder) literal(word string) error {
	for i := range len(word) {
		if !d.accept(word[i]) {
			return d.syntaxError("in literal " + word)
		}
	}
	return nil
}

// skipSpace skips JSON's white space, which is only these four.
func (d *identityDecoder) skipSpace() {
	for d.accept(' ') || d.accept('\t') || d.accept('\n') || d.accept('\r') {
	}
}

// peek returns the byte at d.off, or 0 at the end (callers that take 0
// check for the end).
func (d *identityDecoder) peek() byte {
	if d.off < len(d.data) {
		return d.data[d.off]
	}
	return 0
}

func (d *identityDecoder) accept(c byte) bool {
	if d.off < len(d.data) && d.data[d.off] == c {
		d.off++
		return true
	}
	return false
}

func (d *identityDecoder) syntaxError(context string) error {
	if d.off >= len(d.data) {
		return &identityJSONError{Offset: d.off, Msg: "unexpected end of JSON input"}
	}
	return &identityJSONError{Offset: d.off, Msg: "invalid character " + strconv.QuoteRune(rune(d.data[d.off])) + " " + context}
}

// appendJSONString appends s quoted as json.Marshal quotes it: with the
// short escapes, \u00XX for other control characters and for <, > and &,
// \u2028 and \u2029 (JSONP), and \ufffd for each byte of invalid UTF-8.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		var esc byte // the letter after the backslash
		switch {
		case r == '"' || r == '\\':
			esc = byte(r)
		case r == '\b':
			esc = 'b'
		case r == '\f':
			esc = 'f'
		case r == '\n':
			esc = 'n'
		case r == '\r':
			esc = 'r'
		case r == '\t':
			esc = 't'
		case r < ' ' || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029' || r == utf8.RuneError && n == 1:
			esc = 'u' // utf8.RuneError is U+FFFD
		default:
			i += n
			continue
		}
		b = append(b, s[start:i]...)
		if esc == 'u' {
			b = append(b, '\\', 'u', hex[r>>12], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		} else {
			b = append(b, '\\', esc)
		}
		i += n
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
