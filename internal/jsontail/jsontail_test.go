package jsontail

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestTrailing(t *testing.T) {
	for doc, want := range map[string]bool{
		`{"a":1}`:           false,
		"{\"a\":1}\n":       false,
		" {\"a\":1} \t\r\n": false,
		`{"a":1}}`:          true,
		`{"a":1}]`:          true,
		`{"a":1} {}`:        true,
		`{"a":1},`:          true,
		`{"a":1} x`:         true,
		`[1,2]]`:            true,
		`"s" "t"`:           true,
	} {
		dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("Decode(%q): %v", doc, err)
		}
		if got := Trailing(dec, []byte(doc)); got != want {
			t.Errorf("Trailing after %q = %v, want %v", doc, got, want)
		}
	}
}
